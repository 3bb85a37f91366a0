package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// leaseRounds is how many random kills, pauses and restarts the
// several-checkers test runs.
var (
	leaseRounds = flag.Int("lease.rounds", 5, "random kills, pauses and restarts in TestE2ESeveralCheckers")
	leaseGroups = flag.Int("lease.groups", 9, "groups shared by the checkers of TestE2ESeveralCheckers")
	// leaseInterval is the checkers' interval; their lease lasts three.
	leaseInterval = flag.Duration("lease.interval", time.Second, "interval of the checkers of TestE2ESeveralCheckers")
)

// leaseCheckers is how many checkers share the groups.
const leaseCheckers = 3

// leaseWrite is one lease write that DynamoDB (moto) accepted, as seen on
// the wire.
type leaseWrite struct {
	at      time.Time // the request's arrival
	group   string
	owner   string // "" for a release
	expires time.Time
}

// scaleCall is one SetDesiredCapacity call moto answered, and who made it.
type scaleCall struct {
	at    time.Time
	group string // the Auto Scaling group's name
	by    string // the identity of the checker whose proxy it came through
}

// wire records, for every checker, the lease writes and scaling calls that
// reach moto, and counts its DynamoDB requests.
type wire struct {
	mu      sync.Mutex
	writes  []leaseWrite
	calls   []scaleCall
	ops     map[int]map[string]int // DynamoDB requests per checker slot, by operation (and owner written)
	seq     map[int][]string       // DynamoDB operations per checker slot, in arrival order
	current map[int]string         // the identity running in each slot
}

// recorder is a reverse proxy in front of moto for one checker slot. The
// checker's own fault proxy forwards to it, so it sees only the requests
// that reach moto, with moto's answers.
func (w *wire) recorder(t *testing.T, slot int, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a checker giving up on a call is no news here
	type reqInfo struct {
		at   time.Time
		op   string
		body []byte
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		info, ok := resp.Request.Context().Value(reqKey{}).(reqInfo)
		if !ok || resp.StatusCode != http.StatusOK {
			return nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch info.op {
		case "UpdateItem":
			if lw, ok := parseLeaseWrite(info.body); ok {
				lw.at = info.at
				w.writes = append(w.writes, lw)
			}
		case "SetDesiredCapacity":
			form, err := url.ParseQuery(string(info.body))
			if err == nil {
				w.calls = append(w.calls, scaleCall{at: info.at, group: form.Get("AutoScalingGroupName"), by: w.current[slot]})
			}
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		req := &awstest.Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header, Body: body}
		op := req.Operation()
		if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_") {
			w.mu.Lock()
			if w.ops[slot] == nil {
				w.ops[slot] = map[string]int{}
			}
			k := op
			if lw, ok := parseLeaseWrite(body); ok {
				k += "/" + lw.owner
			}
			w.ops[slot][k]++
			w.seq[slot] = append(w.seq[slot], op)
			w.mu.Unlock()
		}
		// The request goes on to moto even when the checker gives up on it,
		// so that what moto did is always recorded.
		ctx := context.WithValue(context.WithoutCancel(r.Context()), reqKey{}, reqInfo{at: at, op: op, body: body})
		// A plain ResponseWriter: the proxy would otherwise cancel the call to
		// moto when the checker's connection closes (http.CloseNotifier).
		rp.ServeHTTP(struct{ http.ResponseWriter }{rw}, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type reqKey struct{}

// parseLeaseWrite reads a group lease's owner and expiry from an UpdateItem
// request of the lease table.
func parseLeaseWrite(body []byte) (leaseWrite, bool) {
	var in struct {
		Key map[string]struct {
			S string `json:"S"`
		} `json:"Key"`
		Values map[string]struct {
			S *string `json:"S"`
			N *string `json:"N"`
		} `json:"ExpressionAttributeValues"`
	}
	if json.Unmarshal(body, &in) != nil {
		return leaseWrite{}, false
	}
	group, ok := strings.CutPrefix(in.Key["key"].S, "group/")
	if !ok {
		return leaseWrite{}, false
	}
	o, e := in.Values[":o"], in.Values[":e"]
	if o.S == nil || e.N == nil {
		return leaseWrite{}, false
	}
	ms, err := strconv.ParseInt(*e.N, 10, 64)
	if err != nil {
		return leaseWrite{}, false
	}
	return leaseWrite{group: group, owner: *o.S, expires: time.UnixMilli(ms)}, true
}

// holding is one checker's hold on a group, from the time it may act (the
// end of the previous holder's lease, or its own first write, whichever is
// later) to the end of its lease as last written.
type holding struct {
	owner      string
	start, end time.Time
}

// holdings turns the accepted lease writes of a group into who held it when.
func holdings(writes []leaseWrite) []holding {
	var out []holding
	var cur *holding
	for _, w := range writes {
		switch {
		case w.owner == "":
			if cur != nil && w.at.Before(cur.end) {
				cur.end = w.at
			}
		case cur != nil && cur.owner == w.owner:
			if w.expires.After(cur.end) {
				cur.end = w.expires
			}
		default:
			start := w.at
			if cur != nil {
				out = append(out, *cur)
				if cur.end.After(start) {
					start = cur.end
				}
			}
			cur = &holding{owner: w.owner, start: start, end: w.expires}
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// snapshot returns copies of the records, the writes sorted by time.
func (w *wire) snapshot() ([]leaseWrite, []scaleCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	writes, calls := slices.Clone(w.writes), slices.Clone(w.calls)
	slices.SortStableFunc(writes, func(a, b leaseWrite) int { return a.at.Compare(b.at) })
	return writes, calls
}

// holdingsByGroup is each group's holdings by its lease writes.
func holdingsByGroup(writes []leaseWrite) map[string][]holding {
	byGroup := map[string][]leaseWrite{}
	for _, w := range writes {
		byGroup[w.group] = append(byGroup[w.group], w)
	}
	hs := make(map[string][]holding, len(byGroup))
	for g, ws := range byGroup {
		hs[g] = holdings(ws)
	}
	return hs
}

// ownersAt returns each group's holder at time at (by the lease writes).
func ownersAt(writes []leaseWrite, at time.Time) map[string]string {
	out := map[string]string{}
	for g, hs := range holdingsByGroup(writes) {
		for _, h := range hs {
			if !at.Before(h.start) && at.Before(h.end) {
				out[g] = h.owner
			}
		}
	}
	return out
}

// heldBy returns the groups owner held at time at (by the lease writes).
func heldBy(writes []leaseWrite, owner string, at time.Time) []string {
	var out []string
	for g, o := range ownersAt(writes, at) {
		if o == owner {
			out = append(out, g)
		}
	}
	return out
}

// callsWithoutLease counts the calls made by a checker that did not hold
// the lease of the call's group (asgGroup names the group of each Auto
// Scaling group) at that moment, by the holdings hs, and fails the test
// naming the first five.
func callsWithoutLease(t *testing.T, hs map[string][]holding, calls []scaleCall, asgGroup map[string]string) int {
	t.Helper()
	bad := 0
	for _, c := range calls {
		g := asgGroup[c.group]
		if !slices.ContainsFunc(hs[g], func(h holding) bool {
			return h.owner == c.by && !c.at.Before(h.start) && !c.at.After(h.end)
		}) {
			bad++
			if bad <= 5 {
				t.Errorf("%s scaled %s at %s without holding its lease then; holdings: %v", c.by, g, c.at.Format("15:04:05.000"), hs[g])
			}
		}
	}
	return bad
}

// buildChecker builds the checker's binary into a temporary directory
// and returns its path.
func buildChecker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "checker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// checker is one slot of the test: its proxies and the process now
// running in it.
type checker struct {
	slot   int
	faults *awstest.Proxy
	runs   int
	id     string
	proc   *process
}

// leaseFleet makes leaseCheckers checkers, each calling moto at url through
// its own fault proxy that w records. start (re)starts one as a new run of
// bin, from the configuration config renders for it.
func leaseFleet(t *testing.T, w *wire, url, bin string, config func(c *checker) string) ([]*checker, func(c *checker)) {
	t.Helper()
	dir := t.TempDir()
	checkers := make([]*checker, leaseCheckers)
	for i := range checkers {
		c := &checker{slot: i}
		c.faults = awstest.NewProxy(t, w.recorder(t, i, url))
		checkers[i] = c
	}
	start := func(c *checker) {
		c.runs++
		c.id = fmt.Sprintf("c%d-run%d", c.slot, c.runs)
		path := filepath.Join(dir, c.id+".yaml")
		writeFile(t, path, config(c))
		w.mu.Lock()
		w.current[c.slot] = c.id
		w.mu.Unlock()
		c.proc = startProcess(t, bin, path)
	}
	return checkers, start
}

// startAll starts every checker at once.
func startAll(checkers []*checker, start func(c *checker)) {
	var wg sync.WaitGroup
	for _, c := range checkers {
		wg.Go(func() { start(c) })
	}
	wg.Wait()
}

// leaseConfig renders a checker's configuration.
func leaseConfig(endpoint, table, id string, interval time.Duration, groups []e2eGroup) string {
	c := e2eConfig{endpoint: endpoint, interval: interval, maxAttempts: 1, groups: groups}
	y := c.yaml()
	return strings.Replace(y, "groups:\n", fmt.Sprintf("coordination:\n  dynamodb: {table: %s, region: %s}\n  lease_duration: %s\n  identity: %s\ngroups:\n",
		table, east, 3*interval, id), 1)
}

// TestE2ESeveralCheckers runs three `checker run` processes sharing groups
// (9 by default, -lease.groups) through a lease table in moto, at a 1 s
// interval (-lease.interval) and a lease of three intervals, each checker
// behind a fault proxy and a recorder of its own, and checks: the leases
// spread evenly (within one) within 3 lease durations; a checker killed
// with SIGKILL has its groups acted on by the others (goal: within a lease
// duration and an interval; asserted within a lease and two intervals, the
// margin being the emulator's answer time, and the figures logged); one
// stopped with SIGTERM releases its leases, which move (goal: within an
// interval; asserted within three, on a busy machine); one cut off from DynamoDB turns unhealthy
// on /healthz, stops acting within a lease duration, and its groups move;
// DynamoDB requests per checker per cycle stay within leases held + 2; and
// across random kills, pauses longer than a lease and restarts
// (-lease.rounds), every SetDesiredCapacity call that reached moto was made
// by the holder of the group's lease at that moment, as told by the lease
// writes moto accepted.
func TestE2ESeveralCheckers(t *testing.T) {
	leaseInterval := *leaseInterval
	leaseDuration := 3 * leaseInterval
	f := direct(t)
	moto := awstest.Shared(t)
	bin := buildChecker(t)
	table := awstest.UniqueName(t, "leases")
	awstest.CreateLeaseTable(t, f.DynamoDB(east), table)

	// One queue for every group: 40 visible messages at 1 msg/s per worker
	// and a 10 s promise ask for more than one worker, so a group knocked
	// down to one worker is scaled out again by its owner.
	q := makeQueue(t, f, queueSpec{region: east, visible: 15, inFlight: 3})
	var groups []e2eGroup
	asgGroup := map[string]string{}
	for i := range *leaseGroups {
		asg := makeASG(t, f, 1, 10, 1)
		name := fmt.Sprintf("g%02d", i)
		asgGroup[asg] = name
		groups = append(groups, e2eGroup{name: name, queues: []testQueue{q}, serviceTime: time.Second,
			latency: 10 * time.Second, drainTime: time.Minute, asg: asg, min: 1, max: 10})
	}
	groupASG := map[string]string{}
	for asg, g := range asgGroup {
		groupASG[g] = asg
	}

	w := &wire{current: map[int]string{}, ops: map[int]map[string]int{}, seq: map[int][]string{}}
	checkers, start := leaseFleet(t, w, moto.URL, bin, func(c *checker) string {
		return leaseConfig(c.faults.URL, table, c.id, leaseInterval, groups)
	})
	began := time.Now()
	startAll(checkers, start)

	// Spread: 10/10/10 within one of each, within 3 lease durations.
	spreadBy := began.Add(3 * leaseDuration)
	var counts map[string]int
	for {
		writes, _ := w.snapshot()
		counts = map[string]int{}
		for _, o := range ownersAt(writes, time.Now()) {
			counts[o]++
		}
		even, total := len(counts) == leaseCheckers, 0
		for _, n := range counts {
			total += n
			even = even && n >= *leaseGroups/leaseCheckers-1 && n <= *leaseGroups/leaseCheckers+1
		}
		if even && total == *leaseGroups {
			t.Logf("leases spread %v %s after the start", counts, time.Since(began).Round(time.Millisecond))
			break
		}
		if time.Now().After(spreadBy) {
			for _, c := range checkers {
				t.Logf("%s logs:\n%s", c.id, tail(c.proc.logs.String(), 40))
			}
			t.Fatalf("leases not spread within 3 lease durations: %v", counts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every group is acted on: scaled out from 1 by its owner.
	scaledOut := func() bool {
		_, calls := w.snapshot()
		seen := map[string]bool{}
		for _, c := range calls {
			seen[c.group] = true
		}
		return len(seen) == *leaseGroups
	}
	// (Not a timing goal: a loaded emulator may take a while.)
	if !pollUntil(30*time.Second, 100*time.Millisecond, scaledOut) {
		_, calls := w.snapshot()
		var missing []string
		for g, asg := range groupASG {
			if !slices.ContainsFunc(calls, func(c scaleCall) bool { return c.group == asg }) {
				missing = append(missing, g)
			}
		}
		for _, c := range checkers {
			_ = os.WriteFile(filepath.Join(os.TempDir(), "lease-e2e-"+c.id+".log"), []byte(c.proc.logs.String()), 0o600)
		}
		t.Fatalf("not every group scaled out by its owner within 30 s: %d calls, none for %v", len(calls), missing)
	}

	// DynamoDB requests per checker per cycle, over 5 s of steady state.
	measureCalls(t, w, checkers)

	// knockDown sets the fleets of the groups victim holds at `at` to one
	// worker behind the checkers' backs, so that their next owner scales
	// them out again: the first scaling call after `at` marks the takeover.
	knockDown := func(victim string, at time.Time) {
		writes, _ := w.snapshot()
		for g, o := range ownersAt(writes, at) {
			if o != victim {
				continue
			}
			_, _ = f.AutoScaling(east).SetDesiredCapacity(context.Background(), &autoscaling.SetDesiredCapacityInput{
				AutoScalingGroupName: aws.String(groupASG[g]), DesiredCapacity: aws.Int32(1),
			})
		}
	}

	var takeovers []time.Duration
	// takeover knocks every group down at `at` and returns, for each group
	// victim held then, the time until another checker scaled it.
	//
	// It also asserts that the leases moved within `within`: ownership is the
	// lease manager's doing, while the first scaling call also waits for the
	// new owner's sample and fleet read, which a loaded emulator delays. The
	// call is awaited for three lease durations at most.
	var moves []time.Duration
	takeover := func(victim string, at time.Time, within time.Duration) []time.Duration {
		t.Helper()
		writes, _ := w.snapshot()
		theirs := heldBy(writes, victim, at)
		if len(theirs) == 0 {
			return nil
		}
		m := leaseMoves(t, w, victim, at, within)
		moves = append(moves, m...)
		var got []time.Duration
		eventually(t, 3*leaseDuration, fmt.Sprintf("%s's %d groups acted on by others", victim, len(theirs)), func() bool {
			_, calls := w.snapshot()
			first := map[string]time.Time{}
			for _, c := range calls {
				g := asgGroup[c.group]
				if c.by != victim && c.at.After(at) && slices.Contains(theirs, g) {
					if _, ok := first[g]; !ok {
						first[g] = c.at
					}
				}
			}
			if len(first) < len(theirs) {
				return false
			}
			got = got[:0]
			for _, ft := range first {
				got = append(got, ft.Sub(at))
			}
			return true
		})
		slices.Sort(got)
		return got
	}

	// kill -9: the others act on its groups within a lease duration and an interval.
	victim := checkers[0]
	killedAt := time.Now()
	_ = victim.proc.cmd.Process.Kill()
	<-victim.proc.done
	knockDown(victim.id, killedAt)
	d := takeover(victim.id, killedAt, leaseDuration+2*leaseInterval)
	takeovers = append(takeovers, d...)
	t.Logf("kill -9 %s: %d groups taken over in %s .. %s (median %s)", victim.id, len(d), d[0], d[len(d)-1], d[len(d)/2])
	start(victim)

	// SIGTERM: the leases are released at once and move (goal: within an interval).
	time.Sleep(2 * leaseInterval)
	victim = checkers[1]
	termAt := time.Now()
	victim.proc.terminate(t)
	moved := leaseMoves(t, w, victim.id, termAt, 3*leaseInterval)
	t.Logf("SIGTERM %s: its %d leases taken by others %s .. %s after the signal", victim.id, len(moved), moved[0], moved[len(moved)-1])
	start(victim)

	// Cut off from DynamoDB: stops acting, unhealthy on /healthz, and the others take its groups.
	time.Sleep(2 * leaseInterval)
	victim = checkers[2]
	cutAt := time.Now()
	heal := victim.faults.Inject(func(r *awstest.Request) bool {
		return strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_")
	}, awstest.Fault{Kind: awstest.FaultServerError})
	var body string
	eventually(t, leaseDuration+2*leaseInterval, "/healthz 503 naming the lease table on the checker cut off from DynamoDB", func() bool {
		var code int
		code, body = get(t, "http://"+victim.proc.addr+"/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, table)
	})
	t.Logf("cut off: /healthz 503 after %s: %.200s", time.Since(cutAt).Round(time.Millisecond), strings.TrimSpace(body))
	knockDown(victim.id, cutAt)
	d = takeover(victim.id, cutAt, leaseDuration+2*leaseInterval)
	t.Logf("cut off %s: %d groups taken over in %s .. %s", victim.id, len(d), d[0], d[len(d)-1])
	_, calls := w.snapshot()
	for _, c := range calls {
		if c.by == victim.id && c.at.After(cutAt.Add(leaseDuration)) {
			t.Errorf("the cut-off checker scaled %s %s after the cut, more than a lease duration", c.group, c.at.Sub(cutAt))
		}
	}
	heal()
	eventually(t, 3*leaseDuration, "/healthz 200 again once DynamoDB answers", func() bool {
		code, _ := get(t, "http://"+victim.proc.addr+"/healthz")
		return code == http.StatusOK
	})

	// Random kills, pauses longer than a lease, and restarts.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 14))
	for round := range *leaseRounds {
		c := checkers[rng.IntN(len(checkers))]
		op := []string{"kill", "stop", "term"}[rng.IntN(3)]
		t.Logf("round %d: %s %s", round+1, op, c.id)
		switch op {
		case "kill":
			at := time.Now()
			_ = c.proc.cmd.Process.Kill()
			<-c.proc.done
			knockDown(c.id, at)
			if d := takeover(c.id, at, leaseDuration+2*leaseInterval); len(d) > 0 {
				takeovers = append(takeovers, d...)
			}
			start(c)
		case "stop":
			pause := leaseDuration + time.Duration(200+rng.IntN(800))*time.Millisecond
			c.proc.signal(t, syscall.SIGSTOP)
			at := time.Now()
			time.Sleep(pause)
			knockDown(c.id, at)
			c.proc.signal(t, syscall.SIGCONT)
			time.Sleep(leaseInterval)
		case "term":
			c.proc.terminate(t)
			start(c)
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
	}
	time.Sleep(leaseInterval) // let the last round's calls and writes land

	// No double action: every call by the holder of that moment.
	writes, calls := w.snapshot()
	slices.SortStableFunc(calls, func(a, b scaleCall) int { return a.at.Compare(b.at) })
	bad := callsWithoutLease(t, holdingsByGroup(writes), calls, asgGroup)
	lastBy := map[string]scaleCall{}
	minGap := time.Duration(-1)
	for _, c := range calls {
		g := asgGroup[c.group]
		if prev, seen := lastBy[g]; seen && prev.by != c.by {
			if gap := c.at.Sub(prev.at); minGap < 0 || gap < minGap {
				minGap = gap
			}
		}
		lastBy[g] = c
	}
	slices.Sort(takeovers)
	slices.Sort(moves)
	if n := len(moves); n > 0 {
		lateMoves := 0
		for _, d := range moves {
			if d > leaseDuration+leaseInterval {
				lateMoves++
			}
		}
		t.Logf("lease moves after kill -9 or cut-off, %d groups: min %s, p50 %s, p90 %s, max %s; %d later than lease duration + 1 interval",
			n, moves[0], moves[n/2], moves[n*9/10], moves[n-1], lateMoves)
	}
	late := 0
	for _, d := range takeovers {
		if d > leaseDuration+leaseInterval {
			late++
		}
	}
	t.Logf("%d rounds; %d SetDesiredCapacity calls, %d lease writes; %d calls by a checker not holding the lease", *leaseRounds, len(calls), len(writes), bad)
	t.Logf("shortest time between calls of two checkers on one group: %s (lease duration %s)", minGap, leaseDuration)
	if n := len(takeovers); n > 0 {
		t.Logf("takeover after kill -9, %d groups: min %s, p50 %s, p90 %s, max %s; %d later than lease duration + 1 interval (%s)",
			n, takeovers[0], takeovers[n/2], takeovers[n*9/10], takeovers[n-1], late, leaseDuration+leaseInterval)
	}
	for _, c := range checkers {
		if !c.proc.exited() {
			c.proc.terminate(t)
		}
	}
}

// leaseMoves waits until every group victim held at `at` has been written
// to by another checker, and returns the times after `at` sorted; it fails
// the test when the last is later than within.
func leaseMoves(t *testing.T, w *wire, victim string, at time.Time, within time.Duration) []time.Duration {
	t.Helper()
	writes, _ := w.snapshot()
	theirs := heldBy(writes, victim, at)
	if len(theirs) == 0 {
		t.Fatalf("%s held no lease at %s", victim, at)
	}
	var got []time.Duration
	eventually(t, within+2*time.Second, victim+"'s leases taken by others", func() bool {
		writes, _ := w.snapshot()
		first := map[string]time.Time{}
		for _, lw := range writes {
			if lw.owner != "" && lw.owner != victim && lw.at.After(at) && slices.Contains(theirs, lw.group) {
				if _, ok := first[lw.group]; !ok {
					first[lw.group] = lw.at
				}
			}
		}
		if len(first) < len(theirs) {
			return false
		}
		got = got[:0]
		for _, ft := range first {
			got = append(got, ft.Sub(at))
		}
		return true
	})
	slices.Sort(got)
	if worst := got[len(got)-1]; worst > within {
		t.Errorf("%s's leases moved after %s at worst, want within %s", victim, worst, within)
	}
	return got
}

// measureCalls counts each checker's DynamoDB requests reaching moto over a
// few seconds of steady state, cycle by cycle (a cycle's requests are those
// from one scan of the table up to the next), against the leases it holds.
func measureCalls(t *testing.T, w *wire, checkers []*checker) {
	t.Helper()
	heldNow := func(c *checker) float64 {
		_, body := get(t, "http://"+c.proc.addr+"/metrics")
		held, _ := metricValue(body, "checker_leases_held", nil)
		return held
	}
	// A lease that moves in the window (a renewal late on a loaded
	// machine) changes what a cycle may write: each cycle is held to the
	// most leases held at either end of the window.
	before := map[string]float64{}
	for _, c := range checkers {
		before[c.id] = heldNow(c)
	}
	w.mu.Lock()
	for k := range w.ops {
		w.ops[k] = map[string]int{}
		w.seq[k] = nil
	}
	w.mu.Unlock()
	time.Sleep(6 * time.Second)
	for _, c := range checkers {
		held := max(heldNow(c), before[c.id])
		w.mu.Lock()
		ops, seq := maps.Clone(w.ops[c.slot]), slices.Clone(w.seq[c.slot])
		w.mu.Unlock()
		var cycles []int // requests of each whole cycle in the window
		n := -1          // -1 until the window's first scan
		for _, op := range seq {
			if op == "Scan" {
				if n >= 0 {
					cycles = append(cycles, n)
				}
				n = 0
			}
			if n >= 0 {
				n++
			}
		}
		if len(cycles) == 0 {
			t.Errorf("%s: no whole cycle of DynamoDB requests in 6 s", c.id)
			continue
		}
		total := 0
		for _, k := range cycles {
			total += k
		}
		most := slices.Max(cycles)
		t.Logf("%s: %.2f DynamoDB requests per cycle (at most %d) over %d cycles, holding %.0f leases: %v",
			c.id, float64(total)/float64(len(cycles)), most, len(cycles), held, ops)
		if float64(most) > held+2 {
			t.Errorf("%s: %d DynamoDB requests in one cycle, want at most leases held + 2 = %.0f (cycles: %v)", c.id, most, held+2, cycles)
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
