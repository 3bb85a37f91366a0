// Command worker is an example SQS worker that scales in without losing
// work. It long-polls one queue and processes each message (here: sleeps
// for --service-time). When it is told to stop — SIGTERM, as ECS sends
// before stopTimeout runs out, or the instance's target lifecycle state
// turning Terminated while a termination lifecycle hook holds the instance
// in Terminating:Wait — it stops receiving, finishes and deletes every
// message it holds, completes the lifecycle action, and exits 0. No message
// it took waits out its visibility timeout to be processed a second time.
//
// Usage:
//
//	worker --queue-url URL [--service-time 200ms] [--concurrency 1] [--wait 20s]
//	       [--group NAME --hook NAME [--poll 5s] [--metadata-endpoint URL]]
//
// Credentials and region come from the SDK's default chain; endpoints can be
// overridden the standard way (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_SQS, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"go.uber.org/zap"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// usageError is a bad command line; its message has been printed.
type usageError struct{ error }

// parseFlags reads the command line into Options, or returns every problem.
func parseFlags(args []string, out io.Writer) (Options, string, error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(out)
	var o Options
	var endpoint string
	fs.StringVar(&o.QueueURL, "queue-url", "", "URL of the SQS queue to drain (required)")
	fs.DurationVar(&o.ServiceTime, "service-time", 200*time.Millisecond, "time one message takes")
	fs.IntVar(&o.Concurrency, "concurrency", 1, "messages held and processed at once")
	fs.DurationVar(&o.Wait, "wait", 20*time.Second, "long-poll wait of one receive, whole seconds, 0s to 20s")
	fs.StringVar(&o.GroupName, "group", "", "Auto Scaling group of this instance (with --hook: complete its termination hook)")
	fs.StringVar(&o.HookName, "hook", "", "name of the group's EC2_INSTANCE_TERMINATING lifecycle hook")
	fs.DurationVar(&o.PollEvery, "poll", 5*time.Second, "how often the target lifecycle state is read (with --hook)")
	fs.StringVar(&endpoint, "metadata-endpoint", "", "instance metadata service endpoint (default: the SDK's)")
	if err := fs.Parse(args); err != nil {
		return o, "", usageError{err}
	}
	var problems []error
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if o.QueueURL == "" {
		problems = append(problems, errors.New("--queue-url: required"))
	}
	if o.ServiceTime < 0 {
		problems = append(problems, errors.New("--service-time: must be >= 0"))
	}
	if o.Concurrency < 1 {
		problems = append(problems, errors.New("--concurrency: must be >= 1"))
	}
	if o.Wait < 0 || o.Wait > 20*time.Second || o.Wait%time.Second != 0 {
		problems = append(problems, errors.New("--wait: whole seconds from 0s to 20s"))
	}
	if (o.GroupName == "") != (o.HookName == "") {
		problems = append(problems, errors.New("--group and --hook: give both or neither"))
	}
	if o.PollEvery <= 0 {
		problems = append(problems, errors.New("--poll: must be > 0"))
	}
	if err := errors.Join(problems...); err != nil {
		fmt.Fprintln(out, err)
		fs.Usage()
		return o, "", usageError{err}
	}
	return o, endpoint, nil
}

func run(args []string, stderr io.Writer) error {
	opts, endpoint, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := zap.NewProduction()
	if err != nil {
		return fmt.Errorf("logger: %w", err)
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load AWS config: %w", err)
	}
	w := &Worker{
		opts:   opts,
		sqs:    sqs.NewFromConfig(cfg),
		handle: Sleep(opts.ServiceTime),
		log:    log.Named("worker").With(zap.String("queue", opts.QueueURL)),
	}
	if opts.lifecycle() {
		w.asg = autoscaling.NewFromConfig(cfg)
		w.metadata = imds.NewFromConfig(cfg, func(o *imds.Options) {
			if endpoint != "" {
				o.Endpoint = endpoint
			}
		})
	}
	return w.Run(ctx)
}
