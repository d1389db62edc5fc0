#include "client/results_client.h"

#include "client/channel_setup.h"

namespace tf::client {

Result<std::unique_ptr<ResultsClient>> ResultsClient::Connect(const std::string& address,
                                                              ClientOptions options) {
  TF_ASSIGN_OR_RETURN(auto channels, ConnectCoordinator(address, options));
  return std::unique_ptr<ResultsClient>(new ResultsClient(std::move(channels), options));
}

Result<v1::ImportResultsResponse> ResultsClient::Import(const v1::ImportResultsRequest& request) {
  auto stub = v1::TuningResults::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
  grpc::ClientContext context;
  PrepareCall(options_, &context);
  v1::ImportResultsResponse response;
  TF_RETURN_IF_ERROR(FromGrpcStatus(stub->ImportResults(&context, request, &response),
                                    channels_->addresses(), options_));
  return response;
}

Result<std::vector<v1::QueryBestResponse>> ResultsClient::ListBest(
    const std::string& kernel, const std::string& device_class) {
  auto stub = v1::TuningResults::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
  v1::ListBestRequest request;
  request.set_kernel(kernel);
  request.set_device_class(device_class);
  grpc::ClientContext context;
  PrepareCall(options_, &context);
  v1::ListBestResponse response;
  TF_RETURN_IF_ERROR(FromGrpcStatus(stub->ListBest(&context, request, &response),
                                    channels_->addresses(), options_));
  return std::vector<v1::QueryBestResponse>(response.entries().begin(), response.entries().end());
}

Result<std::vector<v1::TunedKernel>> ResultsClient::ListKernels(const std::string& device_class) {
  auto stub = v1::TuningResults::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
  v1::ListKernelsRequest request;
  request.set_device_class(device_class);
  grpc::ClientContext context;
  PrepareCall(options_, &context);
  v1::ListKernelsResponse response;
  TF_RETURN_IF_ERROR(FromGrpcStatus(stub->ListKernels(&context, request, &response),
                                    channels_->addresses(), options_));
  return std::vector<v1::TunedKernel>(response.kernels().begin(), response.kernels().end());
}

}  // namespace tf::client
