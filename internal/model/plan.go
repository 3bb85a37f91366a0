package model

// Plan is what the model policy's plan over sampled futures weighed
// (docs/deciding.md, "One objective over sampled futures"): the futures'
// spread, the budget it spent, and what the count chosen costs against one
// more and one fewer.
type Plan struct {
	// HorizonSeconds is how far the plan looked; Futures how many futures
	// it sampled; FromHistory is false while the group's recent past is
	// shorter than a horizon and the one future is today's rate held.
	HorizonSeconds float64 `json:"horizon_seconds"`
	Futures        int     `json:"futures"`
	FromHistory    bool    `json:"from_history"`
	// Arrivals is the spread of the futures' mean arrivals over the horizon.
	Arrivals Spread `json:"arrivals"`
	// Allowance is the share of the futures' messages the plan let start
	// past the promise where a larger count would have saved them (see
	// Budget); UnavoidableLate the messages late whatever the count.
	Allowance       float64 `json:"allowance"`
	UnavoidableLate float64 `json:"unavoidable_late_messages"`
	Budget          Budget  `json:"budget"`
	// Chosen is the count chosen; OneMore and OneFewer the counts beside
	// it, when within the bounds.
	Chosen   PlanCost  `json:"chosen"`
	OneMore  *PlanCost `json:"one_more"`
	OneFewer *PlanCost `json:"one_fewer"`
}

// Spread is a distribution's quantiles, msg/s.
type Spread struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// PlanCost is a count's expected cost over a plan's futures: the paid
// worker-seconds, the start delay each launch pays (charged again, as a
// launch's price), their sum, and the messages started past the promise.
type PlanCost struct {
	Workers       int     `json:"workers"`
	WorkerSeconds float64 `json:"worker_seconds"`
	LaunchSeconds float64 `json:"launch_seconds"`
	LateMessages  float64 `json:"late_messages"`
	LateShare     float64 `json:"late_share"`
	Cost          float64 `json:"cost_worker_seconds"`
}

// Budget is the promise's error budget as the controller's estimate of
// the messages started within it gives it (docs/observability.md, "The
// promise as an SLO").
type Budget struct {
	// Known is false until the estimate is trusted.
	Known bool `json:"known"`
	// Allowance is the share of messages that may start past the promise
	// (1 − target.latency_quantile).
	Allowance float64 `json:"allowance"`
	// Spent and Left are the shares of the window's allowance spent and
	// not yet spent (Left below 0: overspent).
	Spent float64 `json:"spent"`
	Left  float64 `json:"left"`
	// BurnRate is the last hour's late share ÷ the allowance.
	BurnRate float64 `json:"burn_rate"`
}
