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

// What a query that found nothing says: "no tuned configuration of kernel
// 'K' for M=1 on device class 'C'", then `where` (" in the exported file"),
// then what the kernel is tuned for, since a misspelt variable or device
// class is the usual cause: "; its tuned problems have the variables K,M,N"
// when none of `tuned` has the problem's variables, else "; it is tuned on
// a100, h100" when none is of the device class asked. `tuned`: the
// kernel's answering entries on every device class (none: nothing to say).
std::string NotTunedMessage(const ::tunefleet::v1::QueryBestRequest& request,
                            const std::vector<const ::tunefleet::v1::QueryBestResponse*>& tuned,
                            std::string_view where = "");

}  // namespace tf::kernelspec
