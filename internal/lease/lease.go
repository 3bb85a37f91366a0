// Package lease shares the checker's groups among several checkers through
// leases, kept in a DynamoDB table (New) or as Kubernetes Leases
// (NewKubernetes, kube.go), so that exactly one checker acts on a fleet at
// a time and a standby takes over within a lease duration when the owner
// stops. It follows the lease-table pattern of the Kinesis Client Library
// and the DynamoDB lock client: every change of an item is a conditional
// write on a counter that every write increments, so a writer that saw an
// old state of the item always fails.
//
// The table has one string partition key, "key". Its items are:
//
//	group/<name>      the lease of a group: owner, session, counter, expires, ttl
//	checker/<id>      one checker's heartbeat: owner, session, counter, expires, ttl
//
// owner is the checker's identity ("" when the lease is free), session a
// value drawn at each start so that a restarted checker with the same
// identity does not mistake its predecessor's leases for its own, expires
// the end of the lease in Unix milliseconds, and ttl (Unix seconds, an hour
// after expires) the attribute DynamoDB's time to live deletes by, which
// clears the items of groups and checkers that are gone.
//
// Expiry is judged by wall clocks, so the checkers' clocks must agree to
// well within the gap between the end of an owner's last action and the
// end of its lease (see Manager.Permit); NTP or the Amazon Time Sync
// Service keep them within milliseconds.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// dynamoAPI is the part of the DynamoDB client the manager uses.
type dynamoAPI interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

var _ dynamoAPI = (*dynamodb.Client)(nil)

// Options configure a Manager.
type Options struct {
	Table    string
	Identity string
	// Duration is how long a lease lasts unrenewed; at least two intervals.
	Duration time.Duration
	// Interval is the cycle interval: Sync is called once per interval.
	Interval time.Duration
	// ActionDeadline is how long one action may take; the manager permits an
	// action only while the lease is valid for at least this long.
	ActionDeadline time.Duration
	// Groups are the names of the groups this checker can serve.
	Groups []string
	Logger *zap.Logger
	// Registerer receives checker_leases_held and
	// checker_lease_changes_total; nil exports none.
	Registerer prometheus.Registerer
	// Now is the wall clock; nil means time.Now without its monotonic
	// reading (see wallClock).
	Now func() time.Time
}

// held is a lease this checker holds.
type held struct {
	counter int64     // the counter of this checker's last successful write
	since   time.Time // when this checker acquired it
	from    time.Time // when it may act: after the previous owner's lease ran out
	until   time.Time // end of the lease as last written; zero after a failed renewal
}

// wallClock is the time with no monotonic reading, so that every
// comparison a lease takes part in is on the wall clock. The peers judge a
// lease by the wall-clock expiry written in the table; Go's monotonic clock
// stops while a virtual machine is paused, and a checker judging its own
// lease by it would go on acting after a long pause, beyond the expiry its
// peers see.
func wallClock() time.Time { return time.Now().Round(0) }

// Manager holds this checker's leases.
type Manager struct {
	st       store
	id       string
	session  string
	duration time.Duration
	interval time.Duration
	deadline time.Duration
	groups   []string
	log      *zap.Logger
	now      func() time.Time
	metrics  *metrics

	mu        sync.Mutex
	held      map[string]*held
	owners    map[string]item // every group's item as last seen
	peers     map[string]time.Time
	freeSince map[string]time.Time
	lastOK    time.Time // last Sync that reached the table
	lastScan  time.Time // time of the last scan that observe saw
	lastErr   error
	started   time.Time
	syncs     int
	// taken are the groups whose lease this checker took since Taken last
	// returned them.
	taken []string
	// bad holds the keys of the items vet found bad, and why.
	bad map[string]string
	// failedTakes counts each group's takes that failed in a row; the
	// episode is warned of once (see take).
	failedTakes map[string]int
	// unsure holds, for each group whose take this checker saw fail, the
	// latest end of the previous owner's lease it meant to take over. The
	// write may still have reached the table (an answer lost, a retry
	// refused on the condition the first attempt changed): if a scan shows
	// the lease this checker's after all, it acts only from then.
	unsure map[string]time.Time
	// units counts the request units the table's calls consume (units.go).
	units units
	// beats holds each peer's heartbeat as last seen changed, by item key.
	beats map[string]beat
}

// beat is a peer's heartbeat as a scan showed it, and since when it has
// shown it unchanged.
type beat struct {
	expires time.Time
	session string
	since   time.Time
}

// New checks the options and makes a Manager whose leases are items of
// the DynamoDB table o.Table. It makes no call.
func New(api dynamoAPI, o Options) (*Manager, error) {
	var errs []error
	if api == nil {
		errs = append(errs, errors.New("lease: a DynamoDB client is required"))
	}
	if o.Table == "" {
		errs = append(errs, errors.New("lease: a table is required"))
	}
	m, err := newLeaseManager(o, errs)
	if err != nil {
		return nil, err
	}
	m.st = &dynamoStore{api: api, table: o.Table, units: &m.units}
	return m, nil
}

// newLeaseManager checks the options common to every store and makes a Manager
// without its store; errs are the caller's problems, reported with them.
func newLeaseManager(o Options, errs []error) (*Manager, error) {
	if o.Identity == "" {
		errs = append(errs, errors.New("lease: an identity is required"))
	}
	if o.Interval <= 0 {
		errs = append(errs, errors.New("lease: the interval must be positive"))
	}
	if o.Duration < 2*o.Interval {
		errs = append(errs, fmt.Errorf("lease: the lease duration (%s) must be at least two intervals (%s)", o.Duration, 2*o.Interval))
	}
	if o.ActionDeadline < 0 || o.ActionDeadline >= o.Duration {
		errs = append(errs, fmt.Errorf("lease: the action deadline (%s) must be within the lease duration (%s)", o.ActionDeadline, o.Duration))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	m := &Manager{
		id: o.Identity, session: hex.EncodeToString(nonce[:]),
		duration: o.Duration, interval: o.Interval, deadline: o.ActionDeadline,
		groups: slices.Clone(o.Groups), log: o.Logger, now: o.Now,
		held: map[string]*held{}, owners: map[string]item{}, peers: map[string]time.Time{},
		freeSince: map[string]time.Time{}, failedTakes: map[string]int{}, unsure: map[string]time.Time{},
		beats: map[string]beat{},
	}
	slices.Sort(m.groups)
	if m.log == nil {
		m.log = zap.NewNop()
	}
	if m.now == nil {
		m.now = wallClock
	}
	if o.Registerer != nil {
		mt, err := newMetrics(o.Registerer)
		if err != nil {
			return nil, err
		}
		m.metrics = mt
	}
	return m, nil
}

// Identity is this checker's name in the table.
func (m *Manager) Identity() string { return m.id }

// SetGroups replaces the groups this checker can serve (after a reload).
// Leases of groups no longer served are released at the next Sync.
func (m *Manager) SetGroups(groups []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.groups = slices.Clone(groups)
	slices.Sort(m.groups)
	if gs, ok := m.st.(interface{ setGroups([]string) }); ok {
		gs.setGroups(m.groups)
	}
}

// Sync is one lease cycle: read the table, write this checker's
// heartbeat, renew the leases it holds, take free and expired ones up to
// its share, and take at most one from a checker above its share. It makes
// at most one scan page per 1 MB of table, one heartbeat, one write per
// lease held at the end, and one write that may fail (a lease lost in a
// race). A failed renewal stops the lease's actions at once; the lease is
// kept, and renewed at the next Sync if no one else has taken it. The error
// says what failed; Sync does what it can regardless. now is the wall-clock
// time of the cycle: every expiry the Sync writes and judges counts from
// it.
func (m *Manager) Sync(ctx context.Context, now time.Time) error {
	now = now.Round(0) // the wall clock: see wallClock
	m.mu.Lock()
	if m.started.IsZero() {
		m.started = now
	}
	first := m.syncs == 0
	m.syncs++
	groups := m.groups
	m.mu.Unlock()

	var errs []error
	items, scanErr := m.scan(ctx, now)
	if scanErr != nil {
		errs = append(errs, scanErr)
	}
	if err := m.heartbeat(ctx, now); err != nil {
		errs = append(errs, err)
	}
	renewed := m.renewAll(ctx, groups, items, scanErr == nil, now)
	if renewed != nil {
		errs = append(errs, renewed)
	}
	if scanErr == nil {
		m.observe(items, now)
		m.mu.Lock()
		m.lastScan = now
		m.mu.Unlock()
		if !first { // the first Sync only learns who else is there
			m.acquire(ctx, groups, items, now)
			m.balance(ctx, groups, items, now)
		}
	}
	err := errors.Join(errs...)
	m.mu.Lock()
	switch {
	case err != nil && m.lastErr == nil:
		m.log.Warn("lease table exchange failed; groups whose leases were not renewed are not acted on", zap.Error(err))
	case err == nil && m.lastErr != nil:
		m.log.Info("lease table exchange works again")
	}
	m.lastErr = err
	if scanErr == nil && renewed == nil {
		m.lastOK = now
	}
	m.units.fold(now, m.interval)
	n := len(m.held)
	un := len(m.unowned(m.lastScan))
	m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.held.Set(float64(n))
		m.metrics.unowned.Set(float64(un))
	}
	return err
}

// scan reads every lease and heartbeat from the store, and vets them.
func (m *Manager) scan(ctx context.Context, now time.Time) (map[string]item, error) {
	items, err := m.st.scan(ctx)
	if err != nil {
		return nil, err
	}
	m.vetAll(items, now)
	m.reportBad()
	return items, nil
}

// heartbeat says this checker is alive for one more lease duration, so that
// the others count it when they share the groups out.
func (m *Manager) heartbeat(ctx context.Context, now time.Time) error {
	return m.st.heartbeat(ctx, m.id, m.session, now.Add(m.duration))
}

// write sets a lease's owner, session and expiry and increments its
// counter, on condition that the lease is as seen (counter seen, or absent
// when seen is -1, or a malformed counter still stored as raw). It returns
// the new counter, and whether the condition failed.
func (m *Manager) write(ctx context.Context, group, owner, session string, seen int64, raw types.AttributeValue, exp time.Time) (int64, bool, error) {
	return m.st.write(ctx, group, owner, session, seen, raw, exp)
}

// renewAll renews every lease held, several at once, and releases those
// of groups no longer served. A lease whose renewal fails on its condition
// is lost; one whose renewal fails otherwise stops acting until a renewal
// succeeds.
func (m *Manager) renewAll(ctx context.Context, groups []string, items map[string]item, scanned bool, now time.Time) error {
	m.mu.Lock()
	if scanned {
		// A lease written with this session but not held here is one whose
		// write reached the table though its caller saw it fail: it is this
		// checker's, and is renewed below before it acts on it. The lease it
		// took over may still run: this checker acts from its end, as known
		// from the failed take, or else after a whole lease, by which any
		// lease written before this one has ended.
		for k, it := range items {
			g, ok := strings.CutPrefix(k, groupPrefix)
			if ok && it.owner == m.id && it.session == m.session && m.held[g] == nil && slices.Contains(groups, g) {
				from, known := m.unsure[g]
				if !known {
					from = now.Add(m.duration)
				}
				from = later(from, now)
				m.held[g] = &held{counter: it.counter, since: now, from: from}
				delete(m.unsure, g)
				m.log.Info("lease found taken by a write seen to fail; acting from the end of the lease it took over",
					zap.String("group", g), zap.Time("acts_from", from))
			}
		}
		for g := range m.unsure {
			if it, ok := items[groupPrefix+g]; !ok || it.owner != m.id || it.session != m.session {
				delete(m.unsure, g)
			}
		}
	}
	names := make([]string, 0, len(m.held))
	for g := range m.held {
		names = append(names, g)
	}
	m.mu.Unlock()
	slices.Sort(names)
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
		sem  = make(chan struct{}, maxWritesInFlight)
	)
	for _, g := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := m.renew(ctx, g, groups, items, scanned, now); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// maxWritesInFlight bounds the lease writes one checker has in flight.
const maxWritesInFlight = 16

// renew renews one lease held.
func (m *Manager) renew(ctx context.Context, g string, groups []string, items map[string]item, scanned bool, now time.Time) error {
	m.mu.Lock()
	h := m.held[g]
	counter := h.counter
	m.mu.Unlock()
	if !slices.Contains(groups, g) {
		m.releaseOne(ctx, g, counter, now)
		return nil
	}
	var raw types.AttributeValue
	if scanned {
		it, ok := items[groupPrefix+g]
		switch {
		case ok && it.owner == m.id && it.session == m.session:
			// A write of ours the table took after we gave up on it, or
			// whose counter was not one to read back (see write): renewed
			// on the counter as stored, a malformed one on its exact value.
			counter = it.counter
			if counter == counterMalformed {
				raw = it.rawCounter
			}
		case !ok || it.counter != counter:
			// Someone else wrote the lease: it is lost, and no write is
			// needed to learn it.
			m.lose(g, "the lease table shows another owner")
			return nil
		}
	}
	sent := now
	n, failed, err := m.write(ctx, g, m.id, m.session, counter, raw, sent.Add(m.duration))
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil:
		if !h.until.IsZero() {
			m.log.Warn("lease renewal failed; not acting on the group until it succeeds", zap.String("group", g), zap.Error(err))
		}
		h.until = time.Time{}
		return fmt.Errorf("renew the lease of %s: %w", g, err)
	case failed:
		m.mu.Unlock()
		m.lose(g, "the renewal's condition failed: another checker holds it")
		m.mu.Lock()
	default:
		if h.until.IsZero() && sent.After(h.since) {
			m.log.Info("lease renewed again; acting on the group", zap.String("group", g))
		}
		h.counter, h.until = n, sent.Add(m.duration)
	}
	return nil
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (m *Manager) lose(group, why string) {
	m.mu.Lock()
	_, ok := m.held[group]
	delete(m.held, group)
	m.mu.Unlock()
	if !ok {
		return
	}
	m.log.Warn("lease lost", zap.String("group", group), zap.String("why", why))
	if m.metrics != nil {
		m.metrics.changes.WithLabelValues(ReasonLost).Inc()
	}
}

// observe records every group's owner and the live checkers.
func (m *Manager) observe(items map[string]item, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.owners)
	clear(m.peers)
	for k, it := range items {
		switch {
		case strings.HasPrefix(k, groupPrefix):
			m.owners[strings.TrimPrefix(k, groupPrefix)] = it
		case strings.HasPrefix(k, checkerPrefix):
			if it.owner != "" && it.expires.After(now) {
				m.peers[strings.TrimPrefix(k, checkerPrefix)] = it.expires
			}
		}
	}
	m.peers[m.id] = now.Add(m.duration)
	for _, g := range m.groups {
		it, ok := m.owners[g]
		free := !ok || it.owner == "" || !it.expires.After(now)
		if _, mine := m.held[g]; mine || !free {
			delete(m.freeSince, g)
			if !free && m.failedTakes[g] > 0 {
				delete(m.failedTakes, g)
			}
			continue
		}
		if _, seen := m.freeSince[g]; !seen {
			m.freeSince[g] = now
		}
	}
}

// view snapshots what the manager knows, for assign and steal.
func (m *Manager) view(groups []string, items map[string]item, now time.Time) view {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := view{self: m.id, groups: groups, items: items, interval: m.interval, now: now,
		held: make(map[string]bool, len(m.held)), peers: maps.Clone(m.peers), freeSince: maps.Clone(m.freeSince)}
	for g := range m.held {
		v.held[g] = true
	}
	return v
}

// acquire takes the free and expired leases assign gives this checker.
func (m *Manager) acquire(ctx context.Context, groups []string, items map[string]item, now time.Time) {
	claims := assign(m.view(groups, items, now))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxWritesInFlight)
	for _, c := range claims {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			m.take(ctx, c, now)
		})
	}
	wg.Wait()
}

// balance takes the lease steal picks, if any.
func (m *Manager) balance(ctx context.Context, groups []string, items map[string]item, now time.Time) {
	if c, ok := steal(m.view(groups, items, now)); ok {
		m.take(ctx, c, now)
	}
}

// take writes this checker into the lease of a claim, sent at now.
func (m *Manager) take(ctx context.Context, c claim, now time.Time) {
	group, from, reason, sent := c.group, c.from, c.reason, now
	var raw types.AttributeValue
	if c.seen == counterMalformed {
		m.mu.Lock()
		raw = m.owners[group].rawCounter
		m.mu.Unlock()
	}
	n, failed, err := m.write(ctx, group, m.id, m.session, c.seen, raw, sent.Add(m.duration))
	if err != nil || failed {
		m.mu.Lock()
		m.failedTakes[group]++
		tries := m.failedTakes[group]
		m.unsure[group] = later(m.unsure[group], from)
		m.mu.Unlock()
		// One lost race is how checkers share a free lease; an error, or
		// a condition that fails again on a lease still free, is not. The
		// episode is warned of once, and ends when the group has an owner.
		switch {
		case err != nil && tries == 1, err == nil && tries == 2:
			m.log.Warn("lease not taken; the group stays without an owner while this goes on",
				zap.String("group", group), zap.Int("attempts", tries), zap.Bool("condition_failed", failed), zap.Error(err))
		default:
			m.log.Debug("lease not taken", zap.String("group", group), zap.Int("attempts", tries), zap.Error(err))
		}
		return
	}
	m.mu.Lock()
	if tries := m.failedTakes[group]; tries > 1 {
		m.log.Info("lease taken after failed attempts", zap.String("group", group), zap.Int("failed_attempts", tries))
	}
	delete(m.failedTakes, group)
	delete(m.unsure, group)
	m.held[group] = &held{counter: n, since: sent, from: from, until: sent.Add(m.duration)}
	m.taken = append(m.taken, group)
	delete(m.freeSince, group)
	prev := m.owners[group].owner
	m.mu.Unlock()
	fields := []zap.Field{zap.String("group", group), zap.String("reason", reason)}
	if prev != "" && prev != m.id {
		fields = append(fields, zap.String("previous_owner", prev))
	}
	if from.After(sent) {
		fields = append(fields, zap.Time("acts_from", from))
	}
	m.log.Info("lease taken", fields...)
	if m.metrics != nil {
		m.metrics.changes.WithLabelValues(reason).Inc()
	}
}

// releaseOne frees a lease held with the given counter.
func (m *Manager) releaseOne(ctx context.Context, group string, counter int64, now time.Time) {
	m.mu.Lock()
	delete(m.held, group)
	m.mu.Unlock()
	_, failed, err := m.write(ctx, group, "", "", counter, nil, now)
	if err != nil || failed {
		m.log.Warn("lease not released; it will expire", zap.String("group", group), zap.Bool("taken", failed), zap.Error(err))
		return
	}
	m.log.Info("lease released", zap.String("group", group))
	if m.metrics != nil {
		m.metrics.changes.WithLabelValues(ReasonReleased).Inc()
	}
}

// Release gives up every lease held and ends the heartbeat, so that the
// other checkers take the groups at their next cycle. Call it after the
// last action.
func (m *Manager) Release(ctx context.Context) error {
	m.mu.Lock()
	hs := make(map[string]int64, len(m.held))
	for g, h := range m.held {
		hs[g] = h.counter
	}
	m.mu.Unlock()
	now := m.now()
	for g, c := range hs {
		m.releaseOne(ctx, g, c, now)
	}
	err := m.st.endHeartbeat(ctx, m.id, m.session, now)
	if m.metrics != nil {
		m.metrics.held.Set(0)
	}
	if err != nil {
		return fmt.Errorf("end the heartbeat of %s: %w", m.id, err)
	}
	return nil
}

// Permit reports whether this checker may act on a group now: it holds the
// lease, the previous owner's lease has run out, and the lease stays valid
// for at least the action deadline. It returns the end of the lease, to
// bound the action by.
func (m *Manager) Permit(group string) (time.Time, bool) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[group]
	if !ok || h.until.IsZero() || now.Before(h.from) || now.Add(m.deadline).After(h.until) {
		return time.Time{}, false
	}
	return h.until, true
}

// DefaultIdentity names this checker when the configuration names none:
// on ECS, the container's id, the last part of the task metadata endpoint's
// URL (ECS_CONTAINER_METADATA_URI_V4, or ECS_CONTAINER_METADATA_URI), which
// differs for every task; elsewhere the host name and the process id.
func DefaultIdentity(getenv func(string) string, hostname func() (string, error), pid int) string {
	for _, k := range []string{"ECS_CONTAINER_METADATA_URI_V4", "ECS_CONTAINER_METADATA_URI"} {
		if u := strings.TrimRight(getenv(k), "/"); u != "" {
			if id := u[strings.LastIndex(u, "/")+1:]; id != "" {
				return clean("ecs-" + id)
			}
		}
	}
	host, err := hostname()
	if err != nil || host == "" {
		host = "checker"
	}
	return clean(fmt.Sprintf("%s-%d", host, pid))
}

// clean keeps an identity to the characters and length the configuration
// accepts for one.
func clean(id string) string {
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:@/+-", c) >= 0
		if !ok {
			b[i] = '-'
		}
	}
	if len(b) > 128 {
		b = b[len(b)-128:]
	}
	return string(b)
}

// Taken returns the groups whose lease this checker took since the last
// call, in the order taken, and forgets them: a checker warms up what it
// took from CloudWatch, whose history its own samples do not cover.
func (m *Manager) Taken() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.taken
	m.taken = nil
	return t
}

// vetAll makes the items that no live checker holds so harmless, and
// reports them: each is warned of once, by key, and counted at each scan
// (reportBad). A heartbeat or lease that expires beyond the lease duration
// and maxClockSkew counts as expired: no live checker writes one; so does
// a peer's heartbeat that has not changed for longer than a lease (a live
// checker writes a new expiry every interval), whatever its expiry, so
// that no group is given to a checker that is not there. A lease
// whose owner has no live heartbeat is trusted for at most the lease
// duration and an interval (the clock skew a checker tolerates, see the
// package comment) and counts as expired beyond: its owner renews nothing,
// and the group would wait for an expiry no checker wrote. A lease of a
// live checker beyond that bound is reported (its clock is ahead) but kept.
// A counter no checker wrote is taken over on its exact stored value (see
// write).
func (m *Manager) vetAll(items map[string]item, now time.Time) {
	far := now.Add(m.duration + maxClockSkew)
	trusted := now.Add(m.duration + m.interval)
	problems := map[string]string{}
	live := map[string]bool{}
	m.mu.Lock()
	for k := range m.beats {
		if _, ok := items[k]; !ok {
			delete(m.beats, k)
		}
	}
	for k, it := range items {
		id, ok := strings.CutPrefix(k, checkerPrefix)
		if !ok {
			continue
		}
		if it.expires.After(far) {
			problems[k] = fmt.Sprintf("heartbeat expires at %s, beyond the lease duration and the clock-skew bound: not counted live", it.expires.UTC().Format(time.RFC3339))
			it.expires = time.Time{}
			items[k] = it
		}
		if id != m.id && it.owner != "" && it.expires.After(now) {
			// A live checker writes a new expiry every interval; one that
			// stays for longer than a lease has no checker behind it,
			// whatever expiry it claims, and would be given groups it
			// never takes.
			b, seen := m.beats[k]
			if !seen || !b.expires.Equal(it.expires) || b.session != it.session {
				m.beats[k] = beat{expires: it.expires, session: it.session, since: now}
			} else if now.Sub(b.since) > m.duration {
				problems[k] = fmt.Sprintf("heartbeat unchanged since %s, longer than a lease, though it expires at %s: no checker renews it; not counted live",
					b.since.UTC().Format(time.RFC3339), it.expires.UTC().Format(time.RFC3339))
				it.expires = time.Time{}
				items[k] = it
			}
		}
		if it.owner != "" && it.expires.After(now) {
			live[id] = true
		}
	}
	m.mu.Unlock()
	for k, it := range items {
		if !strings.HasPrefix(k, groupPrefix) {
			continue
		}
		var why []string
		if it.counter == counterMalformed {
			why = append(why, counterText(it.rawCounter)+": taken over on its stored value")
		}
		switch at := it.expires.UTC().Format(time.RFC3339); {
		case it.expires.After(far):
			why = append(why, fmt.Sprintf("expires at %s, beyond the lease duration and the clock-skew bound: taken over as free", at))
			it.expires = time.Time{}
		case it.expires.After(trusted) && it.owner != "" && !live[it.owner] && it.owner != m.id:
			why = append(why, fmt.Sprintf("its owner %s has no heartbeat and it expires at %s, beyond the lease duration and an interval: taken over as free", clip(it.owner), at))
			it.expires = time.Time{}
		case it.expires.After(trusted):
			why = append(why, fmt.Sprintf("expires at %s, beyond the lease duration and an interval: the clock of its owner %s is ahead", at, clip(it.owner)))
		}
		items[k] = it
		if len(why) > 0 {
			problems[k] = strings.Join(why, "; ")
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, why := range problems {
		if m.bad[k] != why {
			m.log.Warn("lease item not as a checker writes it", zap.String("key", clip(k)), zap.String("problem", why))
		}
	}
	m.bad = problems
}

// consumed is an UpdateItem's report of the capacity it consumed; nil
// without an output.
func consumed(out *dynamodb.UpdateItemOutput) *types.ConsumedCapacity {
	if out == nil {
		return nil
	}
	return out.ConsumedCapacity
}
