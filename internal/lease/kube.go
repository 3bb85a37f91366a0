package lease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// The Kubernetes store keeps each group's lease, and each checker's
// heartbeat, as a coordination.k8s.io/v1 Lease in one namespace:
//
//	queue-checker-group-<name>-<hash>     the lease of a group
//	queue-checker-checker-<id>-<hash>     one checker's heartbeat
//
// where <name> and <id> are made lower-case with every character a Lease
// name cannot hold turned into '-', and <hash> tells apart the names that
// this makes equal. spec.holderIdentity is the owner (absent when free),
// spec.renewTime and spec.leaseDurationSeconds say, for kubectl's reader,
// when it was written and for how long; the annotations hold what the
// manager reads: the key (group/<name>, checker/<id>), the session, the
// counter and the exact expiry in Unix milliseconds. Every write of a
// lease is an update on the resourceVersion of a read that showed the
// counter the manager saw, so a writer that saw an old state of it fails
// on the API server's conflict, as a conditional write does in DynamoDB.
const (
	annotationKey     = "queue-checker.io/key"
	annotationSession = "queue-checker.io/session"
	annotationCounter = "queue-checker.io/counter"
	annotationExpires = "queue-checker.io/expires"
	labelManagedBy    = "app.kubernetes.io/managed-by"
	managedBy         = "queue-checker"
	leaseNamePrefix   = "queue-checker-"
	// maxNamePart bounds the cleaned name or identity within a Lease's
	// name (at most 253 characters).
	maxNamePart = 200
)

// kubeStore keeps the leases as Leases of one namespace.
type kubeStore struct {
	leases    coordclient.LeaseInterface
	namespace string
	now       func() time.Time

	mu sync.Mutex
	// groups maps the Lease name of every group served to its key, for a
	// Lease whose annotations were written over by hand.
	groups map[string]string
	// seen is each Lease's latest state this store read or wrote: a write
	// whose counter matches it updates on its resourceVersion at once.
	seen map[string]*coordinationv1.Lease
}

// NewKubernetes checks the options and makes a Manager whose leases are
// Leases in namespace, read and written through leases (a client of that
// namespace's Leases). It makes no call.
func NewKubernetes(leases coordclient.LeasesGetter, namespace string, o Options) (*Manager, error) {
	var errs []error
	if leases == nil {
		errs = append(errs, errors.New("lease: a Kubernetes client is required"))
	}
	if namespace == "" {
		errs = append(errs, errors.New("lease: a namespace is required"))
	}
	m, err := newLeaseManager(o, errs)
	if err != nil {
		return nil, err
	}
	ks := &kubeStore{leases: leases.Leases(namespace), namespace: namespace, now: m.now,
		groups: map[string]string{}, seen: map[string]*coordinationv1.Lease{}}
	ks.setGroups(m.groups)
	m.st = ks
	return m, nil
}

func (k *kubeStore) String() string { return "Leases in namespace " + k.namespace }

// setGroups tells the store the groups served.
func (k *kubeStore) setGroups(groups []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.groups = make(map[string]string, len(groups))
	for _, g := range groups {
		k.groups[leaseName(groupPrefix+g)] = groupPrefix + g
	}
}

// leaseName is the Lease name of a key: group/<name> or checker/<id>.
func leaseName(key string) string {
	kind, name, _ := strings.Cut(key, "/")
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	clean := strings.Trim(b.String(), "-.")
	if len(clean) > maxNamePart {
		clean = strings.TrimRight(clean[:maxNamePart], "-.")
	}
	sum := sha256.Sum256([]byte(key))
	parts := []string{strings.TrimSuffix(leaseNamePrefix, "-"), kind}
	if clean != "" {
		parts = append(parts, clean)
	}
	return strings.Join(append(parts, hex.EncodeToString(sum[:4])), "-")
}

// scan lists the namespace's Leases (a quorum read: no resourceVersion)
// and reads the checker's among them. A heartbeat an hour past its expiry
// is deleted, as DynamoDB's time to live deletes its item.
func (k *kubeStore) scan(ctx context.Context) (map[string]item, error) {
	list, err := k.leases.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the Leases of namespace %s: %w", k.namespace, err)
	}
	now := k.now()
	items := map[string]item{}
	k.mu.Lock()
	k.seen = make(map[string]*coordinationv1.Lease, len(list.Items))
	var gone []*coordinationv1.Lease
	for i := range list.Items {
		l := &list.Items[i]
		key := l.Annotations[annotationKey]
		if key == "" || leaseName(key) != l.Name {
			// Written over by hand: a group's Lease is known by its name.
			key = k.groups[l.Name]
		}
		if key == "" {
			continue
		}
		k.seen[l.Name] = l
		it := parseLease(l)
		items[key] = it
		if strings.HasPrefix(key, checkerPrefix) && !it.expires.IsZero() && now.Sub(it.expires) > ttlAfterExpiry {
			gone = append(gone, l)
		}
	}
	k.mu.Unlock()
	for _, l := range gone {
		rv := l.ResourceVersion
		// Best effort: a heartbeat that stays is counted as expired.
		_ = k.leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
	}
	return items, nil
}

// parseLease reads a Lease as an item. A counter that is not a whole
// number >= 0 is malformed; its text is kept to take it over on.
func parseLease(l *coordinationv1.Lease) item {
	it := item{session: l.Annotations[annotationSession], counter: counterMalformed}
	if l.Spec.HolderIdentity != nil {
		it.owner = *l.Spec.HolderIdentity
	}
	if c, ok := l.Annotations[annotationCounter]; ok {
		it.rawCounter = &types.AttributeValueMemberS{Value: c}
		if n, err := strconv.ParseInt(c, 10, 64); err == nil && n >= 0 {
			it.counter, it.rawCounter = n, &types.AttributeValueMemberN{Value: c}
		}
	}
	if ms, err := strconv.ParseInt(l.Annotations[annotationExpires], 10, 64); err == nil {
		it.expires = time.UnixMilli(ms)
	} else if l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil {
		// A Lease written by another tool: its own expiry.
		it.expires = l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	}
	return it
}

// counterOf is a Lease's counter as parseLease reads it, and its text.
func counterOf(l *coordinationv1.Lease) (int64, string, bool) {
	c, ok := l.Annotations[annotationCounter]
	if n, err := strconv.ParseInt(c, 10, 64); ok && err == nil && n >= 0 {
		return n, c, true
	}
	return counterMalformed, c, ok
}

// set writes owner, session, expiry and counter into a Lease.
func (k *kubeStore) set(l *coordinationv1.Lease, key, owner, session string, counter int64, exp time.Time) {
	now := k.now()
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[labelManagedBy] = managedBy
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[annotationKey] = key
	l.Annotations[annotationSession] = session
	l.Annotations[annotationCounter] = strconv.FormatInt(counter, 10)
	// The expiry rounded up to the millisecond: never before the end of
	// the owner's last action (Permit's bound).
	l.Annotations[annotationExpires] = strconv.FormatInt(exp.Add(time.Millisecond-time.Nanosecond).UnixMilli(), 10)
	l.Spec.HolderIdentity = nil
	if owner != "" {
		l.Spec.HolderIdentity = &owner
	}
	// At least 1: the API server refuses 0, and a released lease (exp
	// now) is told by its holder's absence.
	secs := int32(min(math.MaxInt32, max(1, math.Ceil(exp.Sub(now).Seconds()))))
	l.Spec.LeaseDurationSeconds = &secs
	renew := metav1.NewMicroTime(now)
	l.Spec.RenewTime = &renew
}

// conflict reports whether err says the Lease changed or went since it was
// read: the condition of a write failed.
func conflict(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err)
}

func (k *kubeStore) remember(l *coordinationv1.Lease) {
	k.mu.Lock()
	k.seen[l.Name] = l
	k.mu.Unlock()
}

// write is a compare-and-swap on the lease's counter: a create when seen
// is -1; otherwise an update on the resourceVersion of a state of the
// Lease that holds the counter seen (the last one read or written, else
// read now).
func (k *kubeStore) write(ctx context.Context, group, owner, session string, seen int64, raw types.AttributeValue, exp time.Time) (int64, bool, error) {
	key := groupPrefix + group
	name := leaseName(key)
	if seen == -1 {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.namespace}}
		k.set(l, key, owner, session, 1, exp)
		out, err := k.leases.Create(ctx, l, metav1.CreateOptions{})
		switch {
		case conflict(err):
			return 0, true, nil
		case err != nil:
			return 0, false, fmt.Errorf("create Lease %s/%s: %w", k.namespace, name, err)
		}
		k.remember(out)
		return 1, false, nil
	}
	matches := func(l *coordinationv1.Lease) bool {
		n, text, present := counterOf(l)
		switch {
		case seen != counterMalformed:
			return n == seen
		case n != counterMalformed:
			return false
		case raw == nil:
			return !present
		default:
			s, ok := raw.(*types.AttributeValueMemberS)
			return present && ok && s.Value == text
		}
	}
	next := nextCounter(seen)
	if seen == counterMalformed {
		next = 1
	}
	k.mu.Lock()
	cached := k.seen[name]
	k.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		var l *coordinationv1.Lease
		if attempt == 0 && cached != nil && matches(cached) {
			l = cached.DeepCopy()
		} else {
			got, err := k.leases.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return 0, true, nil
			case err != nil:
				return 0, false, fmt.Errorf("read Lease %s/%s: %w", k.namespace, name, err)
			case !matches(got):
				k.remember(got)
				return 0, true, nil
			}
			l = got
		}
		k.set(l, key, owner, session, next, exp)
		out, err := k.leases.Update(ctx, l, metav1.UpdateOptions{})
		switch {
		case apierrors.IsConflict(err) && attempt == 0:
			// Changed since the state known: read it again, and write
			// only if it still holds the counter seen (a label added by
			// hand changes the Lease, not the lease).
			continue
		case conflict(err):
			return 0, true, nil
		case err != nil:
			return 0, false, fmt.Errorf("update Lease %s/%s: %w", k.namespace, name, err)
		}
		k.remember(out)
		return next, false, nil
	}
	return 0, true, nil
}

// heartbeat writes the checker's heartbeat Lease, creating it if needed.
func (k *kubeStore) heartbeat(ctx context.Context, id, session string, exp time.Time) error {
	key := checkerPrefix + id
	name := leaseName(key)
	k.mu.Lock()
	cached := k.seen[name]
	k.mu.Unlock()
	for attempt := 0; attempt < 3; attempt++ {
		l := cached
		if l == nil || attempt > 0 {
			got, err := k.leases.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.namespace}}
			case err != nil:
				return fmt.Errorf("write the heartbeat of %s: read Lease %s/%s: %w", id, k.namespace, name, err)
			default:
				l = got
			}
		} else {
			l = l.DeepCopy()
		}
		n, _, _ := counterOf(l)
		k.set(l, key, id, session, nextCounter(max(n, 0)), exp)
		var out *coordinationv1.Lease
		var err error
		if l.ResourceVersion == "" {
			out, err = k.leases.Create(ctx, l, metav1.CreateOptions{})
		} else {
			out, err = k.leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		switch {
		case conflict(err):
			continue
		case err != nil:
			return fmt.Errorf("write the heartbeat of %s: %w", id, err)
		}
		k.remember(out)
		return nil
	}
	return fmt.Errorf("write the heartbeat of %s: Lease %s/%s changed under every attempt", id, k.namespace, name)
}

// endHeartbeat sets the heartbeat's expiry to now, if it is still this
// session's.
func (k *kubeStore) endHeartbeat(ctx context.Context, id, session string, now time.Time) error {
	key := checkerPrefix + id
	name := leaseName(key)
	l, err := k.leases.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case l.Annotations[annotationSession] != session:
		return nil
	}
	n, _, _ := counterOf(l)
	k.set(l, key, id, session, nextCounter(max(n, 0)), now)
	if _, err := k.leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !conflict(err) {
		return err
	}
	return nil
}
