#include "search/surrogate.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>

namespace tf::search {

namespace {

constexpr int kRounds = 40;

Status XgbError(const char* what) {
  return Status::Internal(std::string("xgboost ") + what + ": " + XGBGetLastError());
}

#define TF_XGB(call, what) \
  if ((call) != 0) return XgbError(what)

struct MatrixFree {
  void operator()(void* m) const { XGDMatrixFree(m); }
};
using Matrix = std::unique_ptr<void, MatrixFree>;

Result<Matrix> MakeMatrix(const float* rows, size_t n, size_t width) {
  DMatrixHandle handle = nullptr;
  TF_XGB(XGDMatrixCreateFromMat(rows, n, width, NAN, &handle), "matrix");
  return Matrix(handle);
}

// Quiet once: XGBoost warns on stderr by default.
void Silence() {
  static const bool done = [] { return XGBSetGlobalConfig(R"({"verbosity": 0})") == 0; }();
  (void)done;
}

}  // namespace

Surrogate::~Surrogate() { FreeBoosters(); }

void Surrogate::FreeBoosters() {
  for (void* b : boosters_) XGBoosterFree(b);
  boosters_.clear();
}

Status Surrogate::Fit(const std::vector<float>& features, size_t width,
                      const std::vector<float>& targets) {
  Silence();
  FreeBoosters();
  const size_t n = targets.size();
  std::mt19937_64 rng(seed_ + 7919 * fits_++);
  std::vector<float> rows(n * width), labels(n);
  for (int m = 0; m < models_; ++m) {
    // A bootstrap: n rows drawn with replacement.
    for (size_t i = 0; i < n; ++i) {
      const size_t pick = rng() % n;
      std::copy_n(&features[pick * width], width, &rows[i * width]);
      labels[i] = targets[pick];
    }
    TF_ASSIGN_OR_RETURN(Matrix train, MakeMatrix(rows.data(), n, width));
    TF_XGB(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), n), "labels");
    BoosterHandle booster = nullptr;
    DMatrixHandle cache[] = {train.get()};
    TF_XGB(XGBoosterCreate(cache, 1, &booster), "booster");
    boosters_.push_back(booster);
    const std::string seed = std::to_string(rng() % 1000000007);
    // Each fit starts from the fastest time (the lowest log time) of its bootstrap, not XGBoost's
    // 0.5: so the model does not depend on the unit of the times, and the leaf weights, shrunk
    // toward the start, lean toward the fast (docs/search.md, "Times in any unit": at 400
    // evaluations 0.991 of the optimum against 0.987 starting from the mean).
    const float fastest = n ? *std::min_element(labels.begin(), labels.end()) : 0.0f;
    const std::string base_score = std::to_string(fastest);
    const std::pair<const char*, const char*> params[] = {
        {"nthread", "1"},       {"tree_method", "exact"},  {"max_depth", "6"},
        {"eta", "0.3"},         {"min_child_weight", "1"}, {"colsample_bytree", "0.8"},
        {"seed", seed.c_str()}, {"verbosity", "0"},        {"base_score", base_score.c_str()},
    };
    for (const auto& [key, value] : params) {
      TF_XGB(XGBoosterSetParam(booster, key, value), "parameter");
    }
    for (int round = 0; round < kRounds; ++round) {
      TF_XGB(XGBoosterUpdateOneIter(booster, round, train.get()), "training");
    }
  }
  return Status::Ok();
}

Status Surrogate::Predict(const std::vector<float>& features, size_t width,
                          std::vector<float>* mean, std::vector<float>* spread) const {
  if (boosters_.empty()) return Status::FailedPrecondition("the surrogate is not fitted");
  const size_t n = features.size() / width;
  TF_ASSIGN_OR_RETURN(Matrix rows, MakeMatrix(features.data(), n, width));
  std::vector<double> sum(n), sum_sq(n);
  for (void* booster : boosters_) {
    const bst_ulong* shape = nullptr;
    bst_ulong dims = 0;
    const float* out = nullptr;
    TF_XGB(
        XGBoosterPredictFromDMatrix(
            booster, rows.get(),
            R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
            &shape, &dims, &out),
        "prediction");
    for (size_t i = 0; i < n; ++i) {
      sum[i] += out[i];
      sum_sq[i] += double(out[i]) * out[i];
    }
  }
  const double k = boosters_.size();
  mean->resize(n);
  spread->resize(n);
  for (size_t i = 0; i < n; ++i) {
    (*mean)[i] = sum[i] / k;
    (*spread)[i] = std::sqrt(std::max(0.0, sum_sq[i] / k - (sum[i] / k) * (sum[i] / k)));
  }
  return Status::Ok();
}

}  // namespace tf::search
