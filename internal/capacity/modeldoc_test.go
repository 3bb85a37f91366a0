package capacity_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// docs/model.md is the manual's page on the queueing model. Its worked
// examples are fenced blocks of kind model-example:
//
//	id: planner-catch-up
//	kind: plan
//	given:
//	  arrival_rate: 12          # a comment
//	expect:
//	  drain_floor: 10
//
// The tests below recompute every expect line with the capacity functions
// and, where the formula is simple, with an independent hand formula, and
// fail when the page and the code disagree by more than the rounding of the
// page's last written digit.

const modelDocPath = "../../docs/model.md"

// modelDocIDs are the examples code comments cite; each must stay on the page.
var modelDocIDs = []string{
	"little-143", "measure-in-flight", "drain-million",
	"planner-catch-up", "planner-reserves-cap", "planner-zero-backlog", "planner-start-delay",
	"erlang-50-200ms", "erlang-pooling",
	"daemon-wait-floor", "daemon-wait-floor-four-slots", "daemon-latency-floor",
	"aws-backlog-per-instance", "aws-backlog-per-instance-two-slots",
}

type docEntry struct {
	key    string
	fields []string
	line   int
}

type docExample struct {
	id, kind      string
	line          int
	given, expect []docEntry
}

func readModelDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(modelDocPath)
	if err != nil {
		t.Fatalf("read the model page: %v", err)
	}
	return string(b)
}

// parseModelDoc returns the model-example blocks of the page.
func parseModelDoc(doc string) ([]docExample, error) {
	var out []docExample
	var cur *docExample
	var section *[]docEntry
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		trimmed := strings.TrimSpace(raw)
		if cur == nil {
			if trimmed == "```model-example" {
				cur = &docExample{line: n}
				section = nil
			}
			continue
		}
		if trimmed == "```" {
			if cur.id == "" || cur.kind == "" {
				return nil, fmt.Errorf("line %d: a model-example without id or kind", cur.line)
			}
			out = append(out, *cur)
			cur = nil
			continue
		}
		line := raw
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not key: value", n, raw)
		}
		indented := strings.HasPrefix(key, " ")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !indented && key == "id":
			cur.id = value
		case !indented && key == "kind":
			cur.kind = value
		case !indented && key == "given" && value == "":
			section = &cur.given
		case !indented && key == "expect" && value == "":
			section = &cur.expect
		case indented && section != nil && value != "":
			*section = append(*section, docEntry{key: key, fields: strings.Fields(value), line: n})
		default:
			return nil, fmt.Errorf("line %d: unexpected %q", n, raw)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: model-example block not closed", cur.line)
	}
	return out, nil
}

// docValue is one number as the page writes it.
type docValue struct {
	text     string
	v        float64
	decimals int
}

func parseDocValue(s string) (docValue, error) {
	if strings.ContainsAny(s, "eE_,") {
		return docValue{}, fmt.Errorf("%q: write plain decimals", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return docValue{}, fmt.Errorf("%q is not a number", s)
	}
	d := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		d = len(frac)
	}
	return docValue{text: s, v: v, decimals: d}, nil
}

// agrees reports whether got, rounded to the page's decimals, is the page's
// value: |got − want| ≤ half a unit of its last digit.
func (w docValue) agrees(got float64) bool {
	tol := 0.5 * math.Pow10(-w.decimals)
	return math.Abs(got-w.v) <= tol*(1+1e-9)+1e-12
}

// checker collects the problems of one example: what it reads of the
// block, and every disagreement.
type checker struct {
	ex       docExample
	problems []string
	usedG    map[string]bool
	usedE    map[int]bool
}

func newChecker(ex docExample) *checker {
	return &checker{ex: ex, usedG: map[string]bool{}, usedE: map[int]bool{}}
}

func (c *checker) fail(line int, format string, a ...any) {
	c.problems = append(c.problems, fmt.Sprintf("docs/model.md:%d (%s): %s", line, c.ex.id, fmt.Sprintf(format, a...)))
}

// given returns a given number; ok is false (with a problem) when absent.
func (c *checker) given(key string) (float64, bool) {
	for _, e := range c.ex.given {
		if e.key != key {
			continue
		}
		c.usedG[key] = true
		if len(e.fields) != 1 {
			c.fail(e.line, "%s: want one value, got %q", key, e.fields)
			return 0, false
		}
		v, err := parseDocValue(e.fields[0])
		if err != nil {
			c.fail(e.line, "%s: %v", key, err)
			return 0, false
		}
		return v.v, true
	}
	c.fail(c.ex.line, "given %s is missing", key)
	return 0, false
}

func (c *checker) givenOr(key string, or float64) float64 {
	for _, e := range c.ex.given {
		if e.key == key {
			v, _ := c.given(key)
			return v
		}
	}
	return or
}

func (c *checker) givenInt(key string) int {
	v, ok := c.given(key)
	if ok && v != math.Trunc(v) {
		c.fail(c.ex.line, "given %s = %v must be a whole number", key, v)
	}
	return int(v)
}

// expects returns the expect entries with key, marking them read.
func (c *checker) expects(key string) []docEntry {
	var out []docEntry
	for i, e := range c.ex.expect {
		if e.key == key {
			c.usedE[i] = true
			out = append(out, e)
		}
	}
	return out
}

// compare checks one written field against the code's value and, when
// hand is not NaN, against the hand formula's.
func (c *checker) compare(e docEntry, field int, name string, code, hand float64) {
	if field >= len(e.fields) {
		c.fail(e.line, "%s: missing field %d", name, field+1)
		return
	}
	w, err := parseDocValue(e.fields[field])
	if err != nil {
		c.fail(e.line, "%s: %v", name, err)
		return
	}
	if !w.agrees(code) {
		c.fail(e.line, "%s: the page says %s, the code computes %.6g", name, w.text, code)
	}
	if !math.IsNaN(hand) && !w.agrees(hand) {
		c.fail(e.line, "%s: the page says %s, the hand formula gives %.6g", name, w.text, hand)
	}
}

// scalar checks expect key (one value) when present; required says it must be.
func (c *checker) scalar(key string, code, hand float64, required bool) {
	es := c.expects(key)
	if len(es) == 0 && required {
		c.fail(c.ex.line, "expect %s is missing", key)
	}
	for _, e := range es {
		if len(e.fields) != 1 {
			c.fail(e.line, "%s: want one value, got %q", key, e.fields)
			continue
		}
		c.compare(e, 0, key, code, hand)
	}
}

func (c *checker) boolean(key string, code, hand bool) {
	for _, e := range c.expects(key) {
		if len(e.fields) != 1 || (e.fields[0] != "true" && e.fields[0] != "false") {
			c.fail(e.line, "%s: want true or false, got %q", key, e.fields)
			continue
		}
		if want := e.fields[0] == "true"; want != code || want != hand {
			c.fail(e.line, "%s: the page says %s, the code computes %v, the hand formula %v", key, e.fields[0], code, hand)
		}
	}
}

// finish reports every line of the block nothing read.
func (c *checker) finish() []string {
	for _, e := range c.ex.given {
		if !c.usedG[e.key] {
			c.fail(e.line, "given %s is not an input of kind %s", e.key, c.ex.kind)
		}
	}
	for i, e := range c.ex.expect {
		if !c.usedE[i] {
			c.fail(e.line, "expect %s is not a result of kind %s", e.key, c.ex.kind)
		}
	}
	return c.problems
}

// checkExample recomputes one example and returns its problems.
func checkExample(ex docExample) []string {
	c := newChecker(ex)
	switch ex.kind {
	case "little":
		checkLittle(c)
	case "measure":
		checkMeasure(c)
	case "drain":
		checkDrain(c)
	case "plan":
		checkPlan(c)
	case "erlang":
		checkErlang(c)
	case "model":
		checkModel(c)
	case "backlog_per_worker":
		checkBacklogPerWorker(c)
	default:
		c.fail(ex.line, "unknown kind %q", ex.kind)
		return c.problems
	}
	return c.finish()
}

// Hand formulas, sharing no code with the package.

// handCeil rounds a worker count up, reading a value within a relative 1e-9
// of a whole number as that number.
func handCeil(x float64) float64 {
	if x <= 0 {
		return 0
	}
	if r := math.Round(x); r >= 1 && math.Abs(x-r) <= 1e-9*r {
		return r
	}
	return math.Ceil(x)
}

// handErlangC is Erlang C as the textbook writes it:
// (a^c/c! · c/(c−a)) ÷ (Σ_{i<c} a^i/i! + a^c/c! · c/(c−a)), the terms built
// one from the last. Fine in float64 for the pools on the page.
func handErlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0
	for i := 0; i < c; i++ {
		sum += term
		term *= a / float64(i+1)
	}
	last := term * float64(c) / (float64(c) - a)
	return last / (sum + last)
}

// handErlangCRecursion is Erlang C from the Erlang B recursion
// B(n) = a·B(n−1) / (n + a·B(n−1)) and C = B / (1 − ρ(1 − B)).
func handErlangCRecursion(c int, a float64) float64 {
	b := 1.0
	for n := 1; n <= c; n++ {
		b = a * b / (float64(n) + a*b)
	}
	rho := a / float64(c)
	return b / (1 - rho*(1-b))
}

// handScan is the smallest pool above the offered load for which enough holds.
func handScan(lambda, perServer float64, enough func(cProb, spare float64) bool) int {
	a := lambda / perServer
	for c := int(a) + 1; c < 1_000_000; c++ {
		spare := float64(c)*perServer - lambda
		if spare <= 0 {
			continue
		}
		if enough(handErlangC(c, a), spare) {
			return c
		}
	}
	return -1
}

func checkLittle(c *checker) {
	lam, _ := c.given("arrival_rate")
	s, _ := c.given("service_time_seconds")
	u, _ := c.given("utilization")
	c.scalar("offered_load", capacity.OfferedLoad(lam, s), lam*s, true)
	c.scalar("handlers", float64(capacity.Concurrency(lam, s, u)), handCeil(lam*s/u), true)
	c.scalar("handlers_at_full_load", float64(capacity.Concurrency(lam, s, 1)), handCeil(lam*s), false)
}

func checkMeasure(c *checker) {
	inFlight, _ := c.given("in_flight_mean")
	deleted, _ := c.given("deleted_per_minute")
	k, _ := c.given("concurrency")
	rate := deleted / 60
	s := inFlight / rate
	c.scalar("completion_rate", rate, deleted/60, true)
	c.scalar("service_time_seconds", s, inFlight*60/deleted, true)
	c.scalar("per_worker", k/s, k*deleted/(60*inFlight), false)
	// Little's law forward: the measured S with the completion rate gives
	// back the mean in flight.
	if back := capacity.OfferedLoad(rate, s); math.Abs(back-inFlight) > 1e-9*math.Max(1, inFlight) {
		c.fail(c.ex.line, "λ·S = %v, not the mean in flight %v", back, inFlight)
	}
}

func checkDrain(c *checker) {
	q, _ := c.given("backlog")
	mu, _ := c.given("service_rate")
	lam, _ := c.given("arrival_rate")
	got, ok := capacity.DrainSeconds(q, mu, lam)
	if !ok {
		c.fail(c.ex.line, "DrainSeconds says the backlog never drains")
	}
	c.scalar("drain_seconds", got, q/(mu-lam), true)
}

// planInputKeys are the PlanInput JSON fields a plan example may give.
var planInputKeys = []string{
	capacity.FieldArrivalRate, capacity.FieldWorkers, capacity.FieldPerWorker, capacity.FieldServiceTime,
	capacity.FieldConcurrency, capacity.FieldBacklog, capacity.FieldDrainTarget, capacity.FieldUtilization,
	capacity.FieldBurstPercent, capacity.FieldOverheadPercent, capacity.FieldStartDelay,
	capacity.FieldSafetyWorkers, capacity.FieldCap, capacity.FieldLatencyTarget, capacity.FieldHorizon,
}

func checkPlan(c *checker) {
	given := map[string]float64{}
	for _, e := range c.ex.given {
		if !slices.Contains(planInputKeys, e.key) {
			continue // reported by finish
		}
		v, ok := c.given(e.key)
		if ok {
			given[e.key] = v
		}
	}
	raw, err := json.Marshal(given)
	if err != nil {
		c.fail(c.ex.line, "inputs: %v", err)
		return
	}
	var in capacity.PlanInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		c.fail(c.ex.line, "inputs: %v", err)
		return
	}
	p, err := capacity.NewPlan(in)
	if err != nil {
		c.fail(c.ex.line, "NewPlan: %v", err)
		return
	}
	out, err := json.Marshal(p)
	if err != nil {
		c.fail(c.ex.line, "plan JSON: %v", err)
		return
	}
	var tree any
	if err := json.Unmarshal(out, &tree); err != nil {
		c.fail(c.ex.line, "plan JSON: %v", err)
		return
	}

	hand := handPlan(in)
	for i, e := range c.ex.expect {
		c.usedE[i] = true
		v, err := lookupJSON(tree, e.key)
		if err != nil {
			c.fail(e.line, "%s: %v", e.key, err)
			continue
		}
		if len(e.fields) != 1 {
			c.fail(e.line, "%s: want one value, got %q", e.key, e.fields)
			continue
		}
		h, hasHand := hand[e.key]
		switch v := v.(type) {
		case bool:
			want := e.fields[0]
			if want != strconv.FormatBool(v) || (hasHand && want != strconv.FormatBool(h != 0)) {
				c.fail(e.line, "%s: the page says %s, the plan has %v", e.key, want, v)
			}
		case float64:
			if !hasHand {
				h = math.NaN()
			}
			c.compare(e, 0, e.key, v, h)
		case nil:
			if e.fields[0] != "null" {
				c.fail(e.line, "%s: the page says %s, the plan has null", e.key, e.fields[0])
			}
		default:
			c.fail(e.line, "%s: %T is not a number", e.key, v)
		}
	}
}

// handPlan computes a plan's headline figures from the planner's formulas,
// independently of the package: keys are Plan JSON paths.
func handPlan(in capacity.PlanInput) map[string]float64 {
	k := 1.0
	mu := in.PerWorker
	if in.ServiceTime > 0 {
		k = math.Max(float64(in.Concurrency), 1)
		mu = k / in.ServiceTime
	}
	mu *= 1 - in.OverheadPercent/100
	lam := in.ArrivalRate * (1 + in.BurstPercent/100)
	w := float64(in.Workers)
	net := w*mu - lam
	qStart := math.Max(0, in.Backlog-net*in.StartDelay)
	drainNeed := lam
	if qStart > 0 {
		drainNeed += qStart / in.DrainTarget
	}
	drain := handCeil(drainNeed / mu)
	util := handCeil(lam / (mu * in.Utilization))
	target, steady := math.Max(drain, util), util
	if in.LatencyTarget > 0 {
		perServer := mu / k
		servers := handScan(lam, perServer, func(cProb, spare float64) bool { return cProb/spare <= in.LatencyTarget })
		wait := math.Ceil(float64(servers) / k)
		target, steady = math.Max(target, wait), math.Max(steady, wait)
	}
	rec := target + float64(in.SafetyWorkers)
	planned, capped := rec, 0.0
	if in.Cap > 0 && rec > float64(in.Cap) {
		planned, capped = float64(in.Cap), 1
	}
	h := map[string]float64{
		"modeled_arrival_rate": lam,
		"effective_per_worker": mu,
		"backlog_at_start":     qStart,
		"drain_floor":          drain,
		"utilization_floor":    util,
		"recommended_workers":  rec,
		"steady_state_workers": steady + float64(in.SafetyWorkers),
		"planned_workers":      planned,
		"capped":               capped,
		"current.service_rate": w * mu,
		"current.net_drain":    net,
	}
	if w > 0 {
		h["current.utilization"] = lam / (w * mu)
	}
	if net > 0 {
		h["current.drain_seconds"] = in.Backlog / net
	}
	if servers := planned * k; servers > lam/(mu/k) && lam > 0 {
		a := lam / (mu / k)
		cProb := handErlangC(int(servers), a)
		h["queueing.utilization"] = lam / (planned * mu)
		h["queueing.wait_probability"] = cProb
		h["queueing.mean_wait_seconds"] = cProb / (servers*mu/k - lam)
	}
	return h
}

var selectorRE = regexp.MustCompile(`^([a-z_]+)\[([a-z_]+)=([^\]]+)\]$`)

// lookupJSON follows a dotted path through decoded JSON; a segment
// name[field=value] picks the element of array name whose field is value.
func lookupJSON(tree any, path string) (any, error) {
	cur := tree
	for _, seg := range strings.Split(path, ".") {
		name, field, want := seg, "", ""
		if m := selectorRE.FindStringSubmatch(seg); m != nil {
			name, field, want = m[1], m[2], m[3]
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", seg)
		}
		if cur, ok = obj[name]; !ok {
			return nil, fmt.Errorf("the plan has no %s", name)
		}
		if field == "" {
			continue
		}
		arr, ok := cur.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: not a list", name)
		}
		found := false
		for _, el := range arr {
			m, ok := el.(map[string]any)
			if !ok {
				continue
			}
			if fmt.Sprint(m[field]) == want || fmt.Sprint(m[field]) == strings.ReplaceAll(want, "_", " ") {
				cur, found = el, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s has no element with %s = %s", name, field, want)
		}
	}
	return cur, nil
}

func checkErlang(c *checker) {
	s, ok := c.given("service_time_seconds")
	if !ok || s <= 0 {
		return
	}
	perServer := 1 / s
	tail := c.givenOr("tail_ms", 0) / 1000
	num := func(e docEntry, i int) float64 {
		if i >= len(e.fields) {
			return math.NaN()
		}
		v, err := parseDocValue(e.fields[i])
		if err != nil {
			return math.NaN()
		}
		return v.v
	}
	for _, e := range c.expects("pool") {
		if len(e.fields) != 7 {
			c.fail(e.line, "pool: want c λ ρ C Wq_ms Wq+S_ms P(wait>t), got %q", e.fields)
			continue
		}
		servers, lam := int(num(e, 0)), num(e, 1)
		q := capacity.ErlangC(servers, lam, perServer)
		if !q.Stable {
			c.fail(e.line, "pool of %d at %v msg/s is not stable", servers, lam)
			continue
		}
		a := lam / perServer
		hc := handErlangC(servers, a)
		if rec := handErlangCRecursion(servers, a); math.Abs(rec-hc) > 1e-9 {
			c.fail(e.line, "hand formulas disagree: sum %v, recursion %v", hc, rec)
		}
		spare := float64(servers)*perServer - lam
		c.compare(e, 2, "ρ", q.Utilization, a/float64(servers))
		c.compare(e, 3, "C(c,a)", q.WaitProbability, hc)
		c.compare(e, 4, "Wq_ms", 1000*q.MeanWait, 1000*hc/spare)
		c.compare(e, 5, "Wq+S_ms", 1000*(q.MeanWait+s), 1000*(hc/spare+s))
		c.compare(e, 6, "P(wait>t)", q.WaitExceeds(tail), hc*math.Exp(-spare*tail))
		if !near(q.MeanQueueLength, lam*q.MeanWait) {
			c.fail(e.line, "Lq = %v, not λ·Wq = %v", q.MeanQueueLength, lam*q.MeanWait)
		}
	}
	for _, e := range c.expects("mean_wait_floor") {
		if len(e.fields) != 3 {
			c.fail(e.line, "mean_wait_floor: want λ W_ms servers, got %q", e.fields)
			continue
		}
		lam, target := num(e, 0), num(e, 1)/1000
		got, ok := capacity.WaitFloor(lam, perServer, target)
		if !ok {
			c.fail(e.line, "WaitFloor has no answer")
		}
		hand := handScan(lam, perServer, func(cProb, spare float64) bool { return cProb/spare <= target })
		c.compare(e, 2, "servers", float64(got), float64(hand))
	}
	for _, e := range c.expects("quantile_floor") {
		if len(e.fields) != 4 {
			c.fail(e.line, "quantile_floor: want λ t_ms q servers, got %q", e.fields)
			continue
		}
		lam, t, share := num(e, 0), num(e, 1)/1000, num(e, 2)
		got, ok := capacity.WaitQuantileFloor(lam, perServer, t, 1-share)
		if !ok {
			c.fail(e.line, "WaitQuantileFloor has no answer")
		}
		hand := handScan(lam, perServer, func(cProb, spare float64) bool { return cProb*math.Exp(-spare*t) <= 1-share })
		c.compare(e, 3, "servers", float64(got), float64(hand))
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// checkModel recomputes the daemon's floors and clamp (section 7 of the
// page) on counts that hold still: no start delay, no forecast, no reserves.
func checkModel(c *checker) {
	lam, _ := c.given("arrival_rate")
	s, _ := c.given("service_time_seconds")
	k := c.givenInt("concurrency")
	visible, _ := c.given("visible")
	inFlight, _ := c.given("in_flight")
	drainT, _ := c.given("drain_target_seconds")
	latency, _ := c.given("latency_seconds")
	quantile, _ := c.given("latency_quantile")
	u, _ := c.given("utilization")
	safety := c.givenInt("safety_workers")
	lo, hiMax, cp := c.givenInt("min"), c.givenInt("max"), c.givenInt("cap")
	if s <= 0 || k <= 0 {
		c.fail(c.ex.line, "service time and concurrency must be > 0")
		return
	}
	mu := float64(k) / s
	perServer := 1 / s
	q := visible + inFlight

	drain := capacity.DrainFloor(lam, mu, q, drainT)
	lat := capacity.DrainFloor(lam, mu, visible, latency)
	util := capacity.UtilizationFloor(lam, mu, u)
	servers, ok := capacity.WaitQuantileFloor(lam, perServer, latency, 1-quantile)
	if !ok {
		c.fail(c.ex.line, "WaitQuantileFloor has no answer")
	}
	wait := (servers + k - 1) / k
	rec := max(drain, lat, util, wait) + safety
	hi := math.MaxInt
	if hiMax > 0 {
		hi = hiMax
	}
	if cp > 0 && cp <= hi {
		hi = cp
	}
	hi = max(hi, lo)
	desired := min(max(rec, lo), hi)

	hDrain := handCeil((lam + q/drainT) / mu)
	hLat := handCeil((lam + visible/latency) / mu)
	hUtil := handCeil(lam / (mu * u))
	hServers := float64(handScan(lam, perServer, func(cProb, spare float64) bool {
		return cProb*math.Exp(-spare*latency) <= 1-quantile
	}))
	hWait := math.Ceil(hServers / float64(k))
	hRec := math.Max(math.Max(hDrain, hLat), math.Max(hUtil, hWait)) + float64(safety)
	hDesired := math.Min(math.Max(hRec, float64(lo)), float64(hi))

	c.scalar("backlog", q, visible+inFlight, true)
	c.scalar("drain_floor", float64(drain), hDrain, true)
	c.scalar("latency_floor", float64(lat), hLat, true)
	c.scalar("utilization_floor", float64(util), hUtil, true)
	c.scalar("wait_servers", float64(servers), hServers, true)
	c.scalar("wait_floor", float64(wait), hWait, true)
	c.scalar("recommended_workers", float64(rec), hRec, true)
	c.scalar("desired_workers", float64(desired), hDesired, true)
	c.boolean("capped", rec > hi, hRec > float64(hi))
}

func checkBacklogPerWorker(c *checker) {
	latency, _ := c.given("latency_seconds")
	s, _ := c.given("service_time_seconds")
	k := c.givenInt("concurrency")
	q, _ := c.given("backlog")
	workers := c.givenInt("workers")
	target := capacity.TargetBacklogPerWorker(latency, s, k)
	per := q / float64(max(workers, 1))
	hTarget := latency / s * float64(k)
	c.scalar("target", target, hTarget, true)
	c.scalar("backlog_per_worker", per, q/float64(max(workers, 1)), true)
	c.scalar("ratio", per/target, per/hTarget, false)
	c.scalar("workers_needed", float64(capacity.BacklogPerWorkerWorkers(q, target)), handCeil(q/hTarget), true)
}

// TestModelDocExamples recomputes every worked example of the model page.
func TestModelDocExamples(t *testing.T) {
	t.Parallel()
	exs, err := parseModelDoc(readModelDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ex := range exs {
		if seen[ex.id] {
			t.Errorf("docs/model.md:%d: example id %q used twice", ex.line, ex.id)
		}
		seen[ex.id] = true
	}
	for _, id := range modelDocIDs {
		if !seen[id] {
			t.Errorf("docs/model.md has no example %q, which code comments cite", id)
		}
	}
	for _, ex := range exs {
		t.Run(ex.id, func(t *testing.T) {
			t.Parallel()
			for _, p := range checkExample(ex) {
				t.Error(p)
			}
		})
	}
}

// bumpLastDigit changes a written number by one unit of its last digit.
func bumpLastDigit(s string) string {
	w, err := parseDocValue(s)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(w.v+math.Pow10(-w.decimals), 'f', w.decimals, 64)
}

// TestModelDocDetectsEdits edits each stated result of the page in turn, by
// one unit of its last digit (or true for false), and requires the check to
// notice: a number on the page that the code does not pin is no example.
func TestModelDocDetectsEdits(t *testing.T) {
	t.Parallel()
	exs, err := parseModelDoc(readModelDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if p := checkExample(ex); len(p) > 0 {
			continue // TestModelDocExamples reports it
		}
		for i, e := range ex.expect {
			for j, f := range e.fields {
				if e.key == "mean_wait_floor" && j < 2 || e.key == "quantile_floor" && j < 3 || e.key == "pool" && j < 2 {
					continue // the row's inputs
				}
				edited := ex
				edited.expect = slices.Clone(ex.expect)
				fields := slices.Clone(e.fields)
				switch f {
				case "true":
					fields[j] = "false"
				case "false":
					fields[j] = "true"
				default:
					fields[j] = bumpLastDigit(f)
				}
				edited.expect[i].fields = fields
				if len(checkExample(edited)) == 0 {
					t.Errorf("docs/model.md:%d (%s): %s %s edited to %s passes the check", e.line, ex.id, e.key, f, fields[j])
				}
			}
		}
	}
}

var (
	headingRE = regexp.MustCompile(`^(#{2,3}) (\d+)\.(\d+)? ?(.*)$`)
	linkRE    = regexp.MustCompile(`\]\(#([^)]+)\)`)
)

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestModelDocSections checks the page's numbered headings, which code
// comments cite: sections numbered 1, 2, 3, ... and subsections N.1, N.2,
// ..., and every link within the page lands on a heading.
func TestModelDocSections(t *testing.T) {
	t.Parallel()
	doc := readModelDoc(t)
	anchors := map[string]bool{}
	section, sub := 0, 0
	inFence := false
	for n, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "##") {
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("docs/model.md:%d: heading %q is not numbered like \"## 3. Title\" or \"### 3.1 Title\"", n+1, line)
			continue
		}
		num, _ := strconv.Atoi(m[2])
		switch {
		case m[1] == "##" && m[3] == "":
			if num != section+1 {
				t.Errorf("docs/model.md:%d: section %d follows section %d", n+1, num, section)
			}
			section, sub = num, 0
		case m[1] == "###" && m[3] != "":
			s, _ := strconv.Atoi(m[3])
			if num != section || s != sub+1 {
				t.Errorf("docs/model.md:%d: subsection %d.%d follows %d.%d", n+1, num, s, section, sub)
			}
			sub = s
		default:
			t.Errorf("docs/model.md:%d: %q: sections are \"## N. Title\", subsections \"### N.M Title\"", n+1, line)
		}
		anchors[githubAnchor(strings.TrimLeft(line, "# "))] = true
	}
	if section < 10 {
		t.Errorf("docs/model.md has %d numbered sections", section)
	}
	for _, m := range linkRE.FindAllStringSubmatch(doc, -1) {
		if !anchors[m[1]] {
			t.Errorf("docs/model.md links to #%s, which is no heading of the page", m[1])
		}
	}
}
