// The webhook platform's figures that both shells publish under one name (model/core/
// metric_family.h): the live service's /metrics and a simulated run's series.om.
#pragma once

#include "model/core/metric_family.h"

namespace relaysim::webhook {

// A gauge, labelled status="<Status's name>": requests in the store in each status.
inline constexpr MetricFamily kRequestsFamily{"relaysim_requests", "Requests in the store, by status."};
// A counter (relaysim_completions_total), labelled status="<Status's name>": claims completed,
// by the status they left the request in.
inline constexpr MetricFamily kCompletionsFamily{"relaysim_completions", "Claims completed, by the status they left the request in."};

}  // namespace relaysim::webhook
