#include "web/rpc_metrics.h"

#include <array>

namespace tf::web {
namespace {

namespace gx = grpc::experimental;

class RpcCounter final : public gx::Interceptor {
 public:
  RpcCounter(gx::ServerRpcInfo* info, Metrics& metrics) : info_(info), metrics_(metrics) {}

  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_.CountRpc(info_->method(), GrpcCodeName(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  gx::ServerRpcInfo* info_;
  Metrics& metrics_;
};

class RpcCounterFactory final : public gx::ServerInterceptorFactoryInterface {
 public:
  explicit RpcCounterFactory(Metrics& metrics) : metrics_(metrics) {}
  gx::Interceptor* CreateServerInterceptor(gx::ServerRpcInfo* info) override {
    return new RpcCounter(info, metrics_);  // gRPC owns it
  }

 private:
  Metrics& metrics_;
};

}  // namespace

const char* GrpcCodeName(grpc::StatusCode code) {
  static constexpr std::array<const char*, 17> kNames = {"OK",
                                                         "CANCELLED",
                                                         "UNKNOWN",
                                                         "INVALID_ARGUMENT",
                                                         "DEADLINE_EXCEEDED",
                                                         "NOT_FOUND",
                                                         "ALREADY_EXISTS",
                                                         "PERMISSION_DENIED",
                                                         "RESOURCE_EXHAUSTED",
                                                         "FAILED_PRECONDITION",
                                                         "ABORTED",
                                                         "OUT_OF_RANGE",
                                                         "UNIMPLEMENTED",
                                                         "INTERNAL",
                                                         "UNAVAILABLE",
                                                         "DATA_LOSS",
                                                         "UNAUTHENTICATED"};
  int index = static_cast<int>(code);
  return index >= 0 && index < static_cast<int>(kNames.size()) ? kNames[index] : "UNKNOWN";
}

std::vector<std::unique_ptr<gx::ServerInterceptorFactoryInterface>> RpcMetricsInterceptors(
    Metrics& metrics) {
  std::vector<std::unique_ptr<gx::ServerInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<RpcCounterFactory>(metrics));
  return factories;
}

}  // namespace tf::web
