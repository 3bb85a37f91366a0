// Package keda serves KEDA's external scaler (api/externalscaler) from the
// checker: a cluster that runs KEDA asks it, per ScaledObject, whether a
// group's workers should run at all and how many, and KEDA's HPA sets the
// replicas (docs/kubernetes.md).
//
// The answers come from the controller's latest decisions (Decisions); the
// scaler keeps no state of its own:
//
//   - GetMetricSpec: one metric per group, named queue-checker-<group>,
//     with targetSizeFloat 1;
//   - GetMetrics: the group's decided worker count, so that the HPA's
//     AverageValue rule, ceil(value ÷ target), lands on exactly that count;
//   - IsActive: the decided count is above zero (the policy's activation
//     rule wakes a group at zero, and its scale-in window puts it back);
//     StreamIsActive sends it at once and again each time it changes;
//   - StreamMetricSpec: GetMetricSpec's answer, sent once on a stream
//     kept open (the spec never changes).
//
// Every stream the server serves (StreamIsActive, StreamMetricSpec and
// server reflection's) takes one of the same maxStreams places, and one
// connection carries at most the streams and a few calls more (NewServer).
//
// A held decision (stale, partial or missing data, a pause) answers the
// count the checker holds the fleet at, never a drop. Errors carry gRPC
// codes: InvalidArgument without scalerMetadata.group, NotFound for a
// group the configuration does not have, Unavailable before the group's
// first decision and while another checker holds its lease (or none yet),
// ResourceExhausted for a stream beyond the most open at once. Input
// repeated in an error is cut short.
package keda

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// GroupKey is the trigger metadata key that names the checker group.
const GroupKey = "group"

// MetricPrefix starts the name of a group's metric.
const MetricPrefix = "queue-checker-"

// Decisions is where the scaler reads the groups' latest decisions: the
// read model the controller feeds (*readmodel.Model).
type Decisions interface {
	Latest(group string) (readmodel.Latest, bool)
}

var _ Decisions = (*readmodel.Model)(nil)

// Scaler is the ExternalScaler service. It is safe for concurrent use.
type Scaler struct {
	pb.UnimplementedExternalScalerServer
	src Decisions
	// poll is how often a StreamIsActive stream looks for a change.
	poll time.Duration
	// streams holds a token per stream open, of any streaming method; a
	// stream that finds it full is refused (NewServer's interceptor).
	streams chan struct{}
}

// DefaultMaxStreams bounds the streams open at once when New is given 0.
const DefaultMaxStreams = 1000

// maxEcho bounds how much of a caller's input an error repeats.
const maxEcho = 128

// DefaultPoll is how often StreamIsActive looks at the latest decision
// when New is given 0.
const DefaultPoll = 250 * time.Millisecond

// New returns a Scaler answering from src. poll is how often an open
// StreamIsActive looks for a change (DefaultPoll when 0): a change is sent
// within poll of the decision that made it. At most maxStreams streams
// (DefaultMaxStreams when 0), of all streaming methods together, are open
// at once on the server NewServer makes: each costs a goroutine and its
// buffers (and a StreamIsActive a look every poll), and a client opening
// them without end would otherwise take the checker's CPU and memory.
func New(src Decisions, poll time.Duration, maxStreams int) *Scaler {
	if poll <= 0 {
		poll = DefaultPoll
	}
	if maxStreams <= 0 {
		maxStreams = DefaultMaxStreams
	}
	return &Scaler{src: src, poll: poll, streams: make(chan struct{}, maxStreams)}
}

// echo is a caller's input as an error repeats it: quoted, and cut to
// maxEcho bytes.
func echo(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// lookup finds the group ref names: InvalidArgument without the metadata
// key, NotFound when the configuration has no such group.
func (s *Scaler) lookup(ref *pb.ScaledObjectRef) (string, readmodel.Latest, error) {
	group := ref.GetScalerMetadata()[GroupKey]
	if group == "" {
		return "", readmodel.Latest{}, status.Errorf(codes.InvalidArgument,
			"scalerMetadata.%s: required: the checker group this ScaledObject scales (the trigger's metadata.%s)", GroupKey, GroupKey)
	}
	l, ok := s.src.Latest(group)
	if !ok {
		return group, l, status.Errorf(codes.NotFound, "scalerMetadata.%s: no group named %s in the checker's configuration", GroupKey, echo(group))
	}
	return group, l, nil
}

// count is the decided worker count of the group ref names.
func (s *Scaler) count(ref *pb.ScaledObjectRef) (string, int, error) {
	group, l, err := s.lookup(ref)
	switch {
	case err != nil:
		return group, 0, err
	case !l.Held && l.Owner == "":
		return group, 0, status.Errorf(codes.Unavailable, "group %s is not held by any checker yet: the checker that takes its lease answers for it", echo(group))
	case !l.Held:
		return group, 0, status.Errorf(codes.Unavailable, "group %s is held by another checker (%s): ask the checker that holds its lease", echo(group), echo(l.Owner))
	case l.Decision == nil:
		return group, 0, status.Errorf(codes.Unavailable, "group %s has no decision yet: the first comes within one interval of the start", echo(group))
	}
	return group, max(l.Decision.DesiredWorkers, 0), nil
}

// MetricName is the name of the group's metric.
func MetricName(group string) string { return MetricPrefix + group }

// IsActive answers whether the group wants any worker.
func (s *Scaler) IsActive(_ context.Context, ref *pb.ScaledObjectRef) (*pb.IsActiveResponse, error) {
	_, n, err := s.count(ref)
	if err != nil {
		return nil, err
	}
	return &pb.IsActiveResponse{Result: n > 0}, nil
}

// StreamIsActive sends IsActive's answer at once, and again whenever it
// changes, until the client goes away. A group that has no decision yet
// sends nothing until it has one; an unknown group or missing metadata
// ends the stream with the error.
func (s *Scaler) StreamIsActive(ref *pb.ScaledObjectRef, stream pb.ExternalScaler_StreamIsActiveServer) error {
	t := time.NewTicker(s.poll)
	defer t.Stop()
	sent, last := false, false
	for {
		_, n, err := s.count(ref)
		switch {
		case err != nil && status.Code(err) != codes.Unavailable:
			return err
		case err != nil:
			// No decision here yet, or held elsewhere: wait for one.
		case !sent || (n > 0) != last:
			last, sent = n > 0, true
			if err := stream.Send(&pb.IsActiveResponse{Result: last}); err != nil {
				return err
			}
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-t.C:
		}
	}
}

// GetMetricSpec names the group's metric and its per-replica target, 1.
func (s *Scaler) GetMetricSpec(_ context.Context, ref *pb.ScaledObjectRef) (*pb.GetMetricSpecResponse, error) {
	group, _, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	return &pb.GetMetricSpecResponse{MetricSpecs: []*pb.MetricSpec{
		{MetricName: MetricName(group), TargetSize: 1, TargetSizeFloat: 1},
	}}, nil
}

// StreamMetricSpec sends GetMetricSpec's answer at once and keeps the
// stream open until the client goes away: a group's metric and target
// never change, so there is nothing more to send. KEDA then takes its
// specs from the stream rather than asking GetMetricSpec again. Missing
// metadata or an unknown group ends the stream with GetMetricSpec's error.
func (s *Scaler) StreamMetricSpec(ref *pb.ScaledObjectRef, stream pb.ExternalScaler_StreamMetricSpecServer) error {
	spec, err := s.GetMetricSpec(stream.Context(), ref)
	if err != nil {
		return err
	}
	if err := stream.Send(spec); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// GetMetrics answers the group's decided worker count.
func (s *Scaler) GetMetrics(_ context.Context, req *pb.GetMetricsRequest) (*pb.GetMetricsResponse, error) {
	if req.GetScaledObjectRef() == nil {
		return nil, status.Error(codes.InvalidArgument, "scaledObjectRef: required")
	}
	group, n, err := s.count(req.GetScaledObjectRef())
	if err != nil {
		return nil, err
	}
	name := req.GetMetricName()
	if name == "" {
		name = MetricName(group)
	}
	return &pb.GetMetricsResponse{MetricValues: []*pb.MetricValue{
		{MetricName: name, MetricValue: int64(min(n, math.MaxInt32)), MetricValueFloat: float64(n)},
	}}, nil
}

// admit takes a place for a stream of method, or refuses it with
// ResourceExhausted when maxStreams are open; release gives the place
// back.
func (s *Scaler) admit(method string) (release func(), err error) {
	select {
	case s.streams <- struct{}{}:
		return func() { <-s.streams }, nil
	default:
		return nil, status.Errorf(codes.ResourceExhausted,
			"%s refused: %d streams are open, the most this checker serves (keda.max_streams): close some, or ask the unary call (IsActive, GetMetricSpec)",
			method, cap(s.streams))
	}
}

// ReplicasFor is the count an HPA sets for an AverageValue external metric
// (KEDA's metric type for an external scaler): ceil(the sum of the values
// ÷ the target), kept when within tolerance (0.1) of current replicas;
// for tests and documentation.
func ReplicasFor(values []float64, target float64, current int) int {
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	want := int(math.Ceil(sum / target))
	if current > 0 {
		ratio := sum / (target * float64(current))
		if math.Abs(ratio-1) <= 0.1 {
			return current
		}
	}
	return want
}
