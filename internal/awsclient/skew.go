package awsclient

import (
	"errors"
	"net/http"
	"time"

	smithy "github.com/aws/smithy-go"
)

// clockSkewError is a signature SQS refused because the signing time was
// more than skewThreshold from the server's; offset is the server's clock
// minus the caller's, as the answer's Date header gave it.
type clockSkewError struct {
	smithy.APIError
	offset time.Duration
}

func (e *clockSkewError) Unwrap() error { return e.APIError }

// correctSkew keeps the offset of a refusal for a clock that is off and
// reports whether err was one.
func (c *QueueAttributes) correctSkew(err error) bool {
	var skewErr *clockSkewError
	if !errors.As(err, &skewErr) {
		return false
	}
	c.skew.Store(int64(skewErr.offset))
	return true
}

// skewCodes are the error codes of a signature refused, which a clock that
// is off explains when the answer's Date is far from the signing time.
// They are also the codes of a wrong secret or a malformed request, so
// the code alone does not tell.
var skewCodes = map[string]bool{
	"SignatureDoesNotMatch":     true,
	"InvalidSignatureException": true,
	"RequestExpired":            true,
	"RequestTimeTooSkewed":      true,
	"RequestInTheFuture":        true,
	"AuthFailure":               true,
}

// serverOffset is the server's clock minus the caller's: the answer's Date
// against the time it arrived. It is unknown without a Date, for an answer
// from a cache (an Age header) and when the round trip took too long for
// the Date to be trusted.
func serverOffset(h http.Header, sent, received time.Time) (time.Duration, bool) {
	date := h.Get("Date")
	if date == "" || h.Get("Age") != "" || received.Sub(sent) > maxTrustedRoundTrip {
		return 0, false
	}
	server, err := http.ParseTime(date)
	if err != nil {
		return 0, false
	}
	return server.Sub(received), true
}
