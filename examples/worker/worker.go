package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"go.uber.org/zap"
)

// The AWS calls the worker makes, and nothing else.
type sqsAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

type lifecycleAPI interface {
	CompleteLifecycleAction(ctx context.Context, in *autoscaling.CompleteLifecycleActionInput, opts ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error)
}

type metadataAPI interface {
	GetMetadata(ctx context.Context, in *imds.GetMetadataInput, opts ...func(*imds.Options)) (*imds.GetMetadataOutput, error)
}

var (
	_ sqsAPI       = (*sqs.Client)(nil)
	_ lifecycleAPI = (*autoscaling.Client)(nil)
	_ metadataAPI  = (*imds.Client)(nil)
)

// Metadata paths, relative to /latest/meta-data/ (EC2 User Guide, "Instance
// metadata categories"; Amazon EC2 Auto Scaling User Guide, "Retrieve the
// target lifecycle state through instance metadata").
const (
	pathTargetState = "autoscaling/target-lifecycle-state"
	pathInstanceID  = "instance-id"
	// stateTerminated is the target lifecycle state of an instance the group
	// is terminating; with a termination hook it waits in Terminating:Wait
	// until the hook is completed or times out.
	stateTerminated = "Terminated"
)

// Options are the worker's settings.
type Options struct {
	QueueURL    string
	ServiceTime time.Duration // time one message takes
	Concurrency int           // messages held at once
	Wait        time.Duration // long-poll wait of one ReceiveMessage (at most 20s)

	// On an EC2 instance of an Auto Scaling group with a termination
	// lifecycle hook: the group and hook to complete, and how often the
	// target lifecycle state is read. Both names empty: no hook, the worker
	// drains on SIGTERM only (ECS, or an instance without a hook).
	GroupName string
	HookName  string
	PollEvery time.Duration
}

func (o Options) lifecycle() bool { return o.GroupName != "" && o.HookName != "" }

// Handler processes one message; an error leaves the message in the queue,
// to be received again after its visibility timeout.
type Handler func(ctx context.Context, m sqstypes.Message) error

// Sleep is the stand-in for real work: it takes d.
func Sleep(d time.Duration) Handler {
	return func(ctx context.Context, _ sqstypes.Message) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Worker long-polls one queue and drains before it stops.
type Worker struct {
	opts     Options
	sqs      sqsAPI
	asg      lifecycleAPI // nil without a lifecycle hook
	metadata metadataAPI  // nil without a lifecycle hook
	handle   Handler
	log      *zap.Logger

	// Counts, read by tests and logged at the end.
	mu       sync.Mutex
	received int
	deleted  int
	failed   int
}

// Stats are a worker's counts so far.
type Stats struct{ Received, Deleted, Failed int }

// Stats returns the counts so far.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{w.received, w.deleted, w.failed}
}

func (w *Worker) count(f func()) {
	w.mu.Lock()
	f()
	w.mu.Unlock()
}

// Run receives and processes messages until ctx is cancelled (SIGTERM) or
// the instance's target lifecycle state becomes Terminated. Then it stops
// receiving, lets the receive under way return, finishes and deletes every
// message it holds, and, when the instance is terminating, completes the
// lifecycle action so the group terminates it at once instead of at the
// end of the heartbeat timeout.
//
// Work in progress is never cancelled by the stop: the deadline is the
// platform's (the hook's heartbeat timeout, the ECS stopTimeout).
func (w *Worker) Run(ctx context.Context) error {
	work := context.WithoutCancel(ctx)
	stop := make(chan struct{})
	var once sync.Once
	halt := func(why string) {
		once.Do(func() {
			w.log.Info("termination notice: stop receiving, finish held messages", zap.String("by", why))
			close(stop)
		})
	}

	var instanceID string
	terminating := make(chan struct{})
	watchDone := make(chan struct{})
	if w.opts.lifecycle() {
		id, err := w.readMetadata(ctx, pathInstanceID)
		if err != nil {
			return fmt.Errorf("read the instance ID: %w", err)
		}
		instanceID = id
		// A worker restarted on an instance already terminating takes no
		// new work: it only completes the lifecycle action.
		if state, err := w.readMetadata(ctx, pathTargetState); err == nil && state == stateTerminated {
			close(terminating)
			close(watchDone)
			halt("target lifecycle state " + stateTerminated + " at start")
		} else {
			watchCtx, cancelWatch := context.WithCancel(ctx)
			defer func() { cancelWatch(); <-watchDone }()
			go func() {
				defer close(watchDone)
				if w.watch(watchCtx, stop) {
					close(terminating)
					halt("target lifecycle state " + stateTerminated)
				}
			}()
		}
	} else {
		close(watchDone)
	}
	go func() {
		select {
		case <-ctx.Done():
			halt("signal")
		case <-stop:
		}
	}()

	slots := make(chan struct{}, w.opts.Concurrency)
	var held sync.WaitGroup
	defer held.Wait()
receive:
	for {
		// A stop wins over a free slot: select picks at random among ready
		// cases, so ask first.
		select {
		case <-stop:
			break receive
		default:
		}
		// Wait for a free slot, then ask for as many messages as are free.
		select {
		case <-stop:
			break receive
		case slots <- struct{}{}:
		}
		free := 1
	fill:
		for free < min(w.opts.Concurrency, 10) {
			select {
			case slots <- struct{}{}:
				free++
			default:
				break fill
			}
		}
		msgs, err := w.receive(work, free)
		for range free - len(msgs) {
			<-slots
		}
		if err != nil {
			w.log.Warn("receive failed", zap.Error(err))
			select {
			case <-stop:
			case <-time.After(time.Second):
			}
			continue
		}
		w.count(func() { w.received += len(msgs) })
		for _, m := range msgs {
			held.Add(1)
			go func() {
				defer held.Done()
				defer func() { <-slots }()
				w.process(work, m)
			}()
		}
	}
	held.Wait()
	s := w.Stats()
	w.log.Info("drained", zap.Int("received", s.Received), zap.Int("deleted", s.Deleted), zap.Int("failed", s.Failed))

	select {
	case <-terminating:
	default:
		return nil
	}
	_, err := w.asg.CompleteLifecycleAction(work, &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName:  aws.String(w.opts.GroupName),
		LifecycleHookName:     aws.String(w.opts.HookName),
		InstanceId:            aws.String(instanceID),
		LifecycleActionResult: aws.String("CONTINUE"),
	})
	if err != nil {
		// The group still terminates the instance when the heartbeat
		// timeout ends, with the hook's default result.
		return fmt.Errorf("complete lifecycle action %s of %s for %s: %w", w.opts.HookName, w.opts.GroupName, instanceID, err)
	}
	w.log.Info("lifecycle action completed", zap.String("instance", instanceID))
	return nil
}

// receive asks for up to n messages. A receive is never cancelled half way:
// SQS may already have taken the messages it would return.
func (w *Worker) receive(ctx context.Context, n int) ([]sqstypes.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Wait+10*time.Second)
	defer cancel()
	out, err := w.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(w.opts.QueueURL),
		MaxNumberOfMessages: int32(n),
		WaitTimeSeconds:     int32(w.opts.Wait / time.Second),
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", w.opts.QueueURL, err)
	}
	return out.Messages, nil
}

// process handles one message and deletes it when it succeeded.
func (w *Worker) process(ctx context.Context, m sqstypes.Message) {
	if err := w.handle(ctx, m); err != nil {
		w.count(func() { w.failed++ })
		w.log.Warn("message failed; it returns after its visibility timeout",
			zap.String("message_id", aws.ToString(m.MessageId)), zap.Error(err))
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := w.sqs.DeleteMessage(dctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.opts.QueueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
		w.count(func() { w.failed++ })
		w.log.Warn("delete failed; the message will be processed again",
			zap.String("message_id", aws.ToString(m.MessageId)), zap.Error(err))
		return
	}
	w.count(func() { w.deleted++ })
}

// watch reads the target lifecycle state every PollEvery until it is
// Terminated (true), or ctx ends or stop closes (false). A failed read is
// logged when reads start failing and tried again at the next poll.
func (w *Worker) watch(ctx context.Context, stop <-chan struct{}) bool {
	t := time.NewTicker(w.opts.PollEvery)
	defer t.Stop()
	failing := false
	for {
		state, err := w.readMetadata(ctx, pathTargetState)
		switch {
		case err == nil && state == stateTerminated:
			return true
		case err != nil && !failing && ctx.Err() == nil:
			w.log.Warn("read target lifecycle state", zap.Error(err))
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		case <-t.C:
		}
	}
}

func (w *Worker) readMetadata(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := w.metadata.GetMetadata(ctx, &imds.GetMetadataInput{Path: path})
	if err != nil {
		return "", fmt.Errorf("instance metadata %s: %w", path, err)
	}
	defer out.Content.Close()
	b, err := io.ReadAll(io.LimitReader(out.Content, 4096))
	if err != nil {
		return "", fmt.Errorf("instance metadata %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", errors.New("instance metadata " + path + ": empty")
	}
	return s, nil
}
