// The model behind the model-guided strategy: an ensemble of gradient-boosted
// tree regressors (XGBoost, the library behind TVM's cost model), each fitted
// to a different bootstrap of the observations. Their mean predicts the
// objective; their spread says where the observations leave it uncertain.
// Trees suit tuning spaces: ordinal and categorical parameters alike, sharp
// cliffs (a tile that stops fitting), interactions between parameters.
//
// Single-threaded and deterministic for a seed.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace tf::search {

class Surrogate {
 public:
  Surrogate(int models, uint64_t seed) : models_(models), seed_(seed) {}
  ~Surrogate();
  Surrogate(const Surrogate&) = delete;
  Surrogate& operator=(const Surrogate&) = delete;

  // `features`: one row of `width` values per target, row after row.
  Status Fit(const std::vector<float>& features, size_t width, const std::vector<float>& targets);

  // Per row: the ensemble's mean and standard deviation. Fit first.
  Status Predict(const std::vector<float>& features, size_t width, std::vector<float>* mean,
                 std::vector<float>* spread) const;

 private:
  void FreeBoosters();

  int models_;
  uint64_t seed_;
  uint64_t fits_ = 0;
  std::vector<void*> boosters_;  // BoosterHandle
};

}  // namespace tf::search
