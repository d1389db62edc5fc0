// The rules of a best-configuration query that the coordinator's index and
// the offline client (an exported file, client/best_config_cache.h) share, so
// that both refuse the same queries and say the same when nothing answers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::kernelspec {

// kInvalidArgument naming what is wrong: no kernel, a problem without
// variables, or one naming a variable twice (which no tuned problem is).
Status CheckBestQuery(const ::tunefleet::v1::QueryBestRequest& request);

// Why a query found nothing, and what it says: "no tuned configuration of
// kernel 'K' for M=1 on device class 'C'", then `where` (" in the exported
// file"), then what the kernel is tuned for, since a misspelt variable or
// device class is the usual cause. `tuned`: the kernel's answering entries
// on every device class. The reason, and the sentence's end:
//  - NOT_TUNED: `tuned` is empty; "; tuned kernels of a similar name:
//    gemm_f32_cpu" where some of `tuned_kernels` (every kernel tuned) is a
//    likely misspelling of it or the other way round, else nothing more.
//  - OTHER_VARIABLES: none of `tuned` has the problem's variables, "; its
//    tuned problems have the variables K,M,N or M,N"; or the device class
//    asked is tuned, but for other variables only, "; its tuned problems on
//    device class 'C' have the variables K,M,N".
//  - OTHER_DEVICE_CLASS: none of `tuned` is of the device class asked, "; it
//    is tuned on a100, h100".
// The coordinator's index and the offline client call it with what would
// have answered, so that both give the same reason and sentence.
struct NotTuned {
  ::tunefleet::v1::NotFoundReason reason = ::tunefleet::v1::NOT_FOUND_REASON_UNSPECIFIED;
  std::string message;
};
NotTuned ExplainNotTuned(const ::tunefleet::v1::QueryBestRequest& request,
                         const std::vector<const ::tunefleet::v1::QueryBestResponse*>& tuned,
                         std::string_view where = "",
                         const std::vector<std::string>& tuned_kernels = {});

// `response` as a query that found nothing answers: found false, with
// ExplainNotTuned's reason and sentence.
void SetNotTuned(const ::tunefleet::v1::QueryBestRequest& request,
                 const std::vector<const ::tunefleet::v1::QueryBestResponse*>& tuned,
                 ::tunefleet::v1::QueryBestResponse* response,
                 const std::vector<std::string>& tuned_kernels = {});

}  // namespace tf::kernelspec
