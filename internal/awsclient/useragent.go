package awsclient

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// directUserAgent is the direct caller's User-Agent: the checker and its
// version, then the parts sdkAgent, the User-Agent of the region's SQS
// client, has (SDK version, user-agent format, OS, Go version,
// architecture, the SQS module's version), less its per-call feature
// list (m/...). Without sdkAgent the parts the binary knows stand in.
func directUserAgent(version, sdkAgent string) string {
	parts := []string{productName + "/" + userAgentToken(cmp.Or(version, "dev"))}
	for _, p := range strings.Fields(sdkAgent) {
		if !strings.HasPrefix(p, "m/") && !strings.HasPrefix(p, productName+"/") {
			parts = append(parts, p)
		}
	}
	if len(parts) == 1 {
		parts = append(parts, aws.SDKName+"/"+aws.SDKVersion, "ua/2.1",
			"lang/go#"+userAgentToken(strings.TrimPrefix(runtime.Version(), "go")),
			"md/GOOS#"+runtime.GOOS, "md/GOARCH#"+runtime.GOARCH)
	}
	return strings.Join(parts, " ")
}

// sdkUserAgent is the User-Agent the SQS client of o sends, read by taking
// one GetQueueAttributes through its middleware up to the HTTP client,
// which sends nothing: signed with a made-up key, unretried and
// unrecorded. "" when the stack stops before (an endpoint that does not
// resolve).
func sdkUserAgent(o sqs.Options) string {
	var agent string
	capture := captureClient(func(r *http.Request) { agent = r.Header.Get("User-Agent") })
	_, _ = sqs.New(o).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String("https://sqs.invalid/0/user-agent")},
		func(o *sqs.Options) {
			o.HTTPClient = capture
			o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "user-agent", SecretAccessKey: "user-agent"}, nil
			})
			o.Retryer = aws.NopRetryer{}
			o.APIOptions = nil // the request metrics, and the checker's own part
		})
	return agent
}

// captureClient is an HTTP client that shows each request to the function
// and sends none.
type captureClient func(*http.Request)

var errNotSent = errors.New("not sent")

func (c captureClient) Do(r *http.Request) (*http.Response, error) {
	c(r)
	return nil, errNotSent
}

// userAgentToken makes s fit in a User-Agent part: every character
// outside letters, digits and !#$%&'*+-.^_`|~ becomes '-'.
func userAgentToken(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', strings.ContainsRune("!#$%&'*+-.^_`|~", r):
			return r
		}
		return '-'
	}, s)
}
