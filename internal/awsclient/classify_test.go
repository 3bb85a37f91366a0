package awsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/queuechecker/queue-checker/internal/model"
)

// answered wraps err the way the SDK does when a response arrived.
func answered(status int, err error) error {
	return &smithy.OperationError{ServiceID: "SQS", OperationName: "GetQueueAttributes",
		Err: &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err:      err,
		}}}
}

// unanswered wraps err the way the SDK does when no response arrived.
func unanswered(err error) error {
	return &smithy.OperationError{ServiceID: "SQS", OperationName: "GetQueueAttributes",
		Err: &smithyhttp.RequestSendError{Err: err}}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"sqs throttled, query-compatible code", answered(400, &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.RequestThrottled"}), model.ErrClassThrottled},
		{"throttling exception", answered(400, &smithy.GenericAPIError{Code: "ThrottlingException"}), model.ErrClassThrottled},
		{"query throttling", answered(400, &smithy.GenericAPIError{Code: "Throttling", Fault: smithy.FaultClient}), model.ErrClassThrottled},
		{"throttled after retries", &retry.MaxAttemptsError{Attempt: 3, Err: answered(400, &smithy.GenericAPIError{Code: "RequestLimitExceeded"})}, model.ErrClassThrottled},
		{"429 unknown code", answered(429, &smithy.GenericAPIError{Code: "Whatever"}), model.ErrClassThrottled},
		{"500", answered(500, &smithy.GenericAPIError{Code: "InternalFailure", Fault: smithy.FaultServer}), model.ErrClassServer},
		{"503 with an unreadable body", answered(503, &smithy.DeserializationError{Err: errors.New("bad")}), model.ErrClassServer},
		{"200 with an unreadable body", answered(200, &smithy.DeserializationError{Err: errors.New("unexpected EOF")}), model.ErrClassMalformed},
		{"403 access denied", answered(403, &smithy.GenericAPIError{Code: "AccessDenied", Fault: smithy.FaultClient}), model.ErrClassClient},
		{"400 missing queue", answered(400, &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.NonExistentQueue"}), model.ErrClassClient},
		{"server fault without status", &smithy.GenericAPIError{Code: "X", Fault: smithy.FaultServer}, model.ErrClassServer},
		{"client fault without status", &smithy.GenericAPIError{Code: "X", Fault: smithy.FaultClient}, model.ErrClassClient},
		{"deadline while sending", unanswered(&url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}), model.ErrClassTimeout},
		{"deadline while waiting to retry", &aws.RequestCanceledError{Err: context.DeadlineExceeded}, model.ErrClassTimeout},
		{"canceled", fmt.Errorf("poll: %w", context.Canceled), model.ErrClassTimeout},
		{"net timeout", unanswered(&url.Error{Op: "Post", URL: "http://x", Err: timeoutErr{}}), model.ErrClassTimeout},
		{"response read timeout", answered(200, &smithy.DeserializationError{Err: &awshttp.ResponseTimeoutError{}}), model.ErrClassTimeout},
		{"connection refused", unanswered(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), model.ErrClassNetwork},
		{"dns", &net.DNSError{Err: "no such host", Name: "sqs.nowhere"}, model.ErrClassNetwork},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), model.ErrClassNetwork},
		{"serialization", &smithy.SerializationError{Err: errors.New("bad input")}, model.ErrClassClient},
		{"anything else", errors.New("boom"), model.ErrClassUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestServiceLabel(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"one word", "SQS", "sqs"},
		{"two words", "Auto Scaling", "auto_scaling"},
		{"camel", "CloudWatch", "cloudwatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := serviceLabel(tc.in); got != tc.want {
				t.Errorf("serviceLabel(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
