#include "client/results_client.h"

#include "auth/bearer.h"
#include "client/channel_setup.h"

namespace tf::client {

Result<std::unique_ptr<ResultsClient>> ResultsClient::Connect(const std::string& address,
                                                              ClientOptions options) {
  if (options.call_timeout_s <= 0) {
    return Status::InvalidArgument("call_timeout_s must be positive, got " +
                                   std::to_string(options.call_timeout_s));
  }
  TF_ASSIGN_OR_RETURN(auto credentials, auth::MakeChannelCredentials(options.tls));
  TF_ASSIGN_OR_RETURN(auto channels,
                      CoordinatorChannels::Make(address, credentials, CoordinatorChannelArgs()));
  return std::unique_ptr<ResultsClient>(new ResultsClient(std::move(channels), options));
}

std::unique_ptr<grpc::ClientContext> ResultsClient::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(options_.call_timeout_s)));
  auth::AttachToken(*context, options_.token);
  return context;
}

Result<v1::ImportResultsResponse> ResultsClient::Import(const v1::ImportResultsRequest& request) {
  auto stub = v1::TuningResults::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
  v1::ImportResultsResponse response;
  TF_RETURN_IF_ERROR(FromGrpcStatus(stub->ImportResults(Context().get(), request, &response),
                                    channels_->addresses(), options_.call_timeout_s));
  return response;
}

Result<std::vector<v1::QueryBestResponse>> ResultsClient::ListBest(
    const std::string& kernel, const std::string& device_class) {
  auto stub = v1::TuningResults::NewStub(channels_->Pick(ChannelWait(options_.call_timeout_s)));
  v1::ListBestRequest request;
  request.set_kernel(kernel);
  request.set_device_class(device_class);
  v1::ListBestResponse response;
  TF_RETURN_IF_ERROR(FromGrpcStatus(stub->ListBest(Context().get(), request, &response),
                                    channels_->addresses(), options_.call_timeout_s));
  return std::vector<v1::QueryBestResponse>(response.entries().begin(), response.entries().end());
}

}  // namespace tf::client
