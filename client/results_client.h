// ResultsClient: a coordinator's TuningResults service (results.proto):
// results recorded elsewhere imported, the best configurations of a kernel
// listed for export, and the kernels tuned. Errors read as Client's do.
// Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/client.h"
#include "tunefleet/v1/results.grpc.pb.h"

namespace tf::client {

class ResultsClient {
 public:
  // As Client::Connect.
  static Result<std::unique_ptr<ResultsClient>> Connect(const std::string& address,
                                                        ClientOptions options = {});

  // Admin only. All of them stored, or none.
  Result<v1::ImportResultsResponse> Import(const v1::ImportResultsRequest& request);
  // Every tuned (problem, device class) of the kernel; device_class empty:
  // every class. Empty when nothing of it is tuned.
  Result<std::vector<v1::QueryBestResponse>> ListBest(const std::string& kernel,
                                                      const std::string& device_class);
  // The kernels ListBest answers for, by name; device_class empty: every
  // class. Empty when nothing is tuned.
  Result<std::vector<v1::TunedKernel>> ListKernels(const std::string& device_class);

 private:
  ResultsClient(std::unique_ptr<CoordinatorChannels> channels, ClientOptions options)
      : options_(std::move(options)), channels_(std::move(channels)) {}

  ClientOptions options_;
  std::unique_ptr<CoordinatorChannels> channels_;
};

}  // namespace tf::client
