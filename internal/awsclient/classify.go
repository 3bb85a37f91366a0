package awsclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/queuechecker/queue-checker/internal/model"
)

// throttleCodes are the error codes AWS services use to ask a caller to
// slow down, beyond the SDK's own list: SQS answers in the JSON protocol
// with its query-compatible code AWS.SimpleQueueService.RequestThrottled.
var throttleCodes = map[string]bool{
	"AWS.SimpleQueueService.RequestThrottled": true,
	"RequestThrottled":                        true,
	"OverLimit":                               true,
	"KMS.ThrottlingException":                 true,
}

// Classify names the kind of failure of an AWS call as one of the
// model.ErrClass* constants; it returns "" for a nil error. The order of the
// checks matters: a throttling error arrives as a 4xx, a deadline can expire
// while the SDK reads a body, and a 5xx answer may carry a body that does
// not parse.
func Classify(err error) string {
	if err == nil {
		return ""
	}
	var apiErr smithy.APIError
	hasAPI := errors.As(err, &apiErr)
	if hasAPI && isThrottleCode(apiErr.ErrorCode()) {
		return model.ErrClassThrottled
	}
	status := 0
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.Response != nil && respErr.Response.Response != nil {
		status = respErr.HTTPStatusCode()
	}
	if status == http.StatusTooManyRequests {
		return model.ErrClassThrottled
	}
	if isTimeout(err) {
		return model.ErrClassTimeout
	}
	if status >= 500 {
		return model.ErrClassServer
	}
	var deserErr *smithy.DeserializationError
	if errors.As(err, &deserErr) {
		return model.ErrClassMalformed
	}
	if status >= 400 {
		return model.ErrClassClient
	}
	if hasAPI {
		switch apiErr.ErrorFault() {
		case smithy.FaultServer:
			return model.ErrClassServer
		case smithy.FaultClient:
			return model.ErrClassClient
		}
	}
	if isNetwork(err) {
		return model.ErrClassNetwork
	}
	var serErr *smithy.SerializationError
	if errors.As(err, &serErr) {
		return model.ErrClassClient
	}
	return model.ErrClassUnavailable
}

func isThrottleCode(code string) bool {
	if throttleCodes[code] {
		return true
	}
	_, ok := retry.DefaultThrottleErrorCodes[code]
	return ok
}

// isTimeout reports a deadline that expired or a call that was given up
// before an answer arrived.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var canceled *smithy.CanceledError
	if errors.As(err, &canceled) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// isNetwork reports a failure to reach the endpoint or to keep the
// connection: refused, reset, DNS, a connection closed mid-answer.
func isNetwork(err error) bool {
	var sendErr *smithyhttp.RequestSendError
	if errors.As(err, &sendErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
