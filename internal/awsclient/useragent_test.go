package awsclient

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestUserAgent compares the User-Agent headers the direct caller and the
// SDK's client send: the direct caller's opens with queue-checker/<version>
// and has the SDK's parts (SDK, OS, Go, architecture, SQS module
// versions) as the SDK's client sends them; the SDK's names the checker's
// version too.
func TestUserAgent(t *testing.T) {
	moto := awstest.Shared(t)
	proxy := awstest.NewProxy(t, moto.URL)
	var mu sync.Mutex
	agents := map[string]string{} // by "direct" or "sdk"
	proxy.Observe(func(r *awstest.Request, _ time.Time) {
		if r.Operation() != "GetQueueAttributes" {
			return
		}
		ua := r.Header.Get("User-Agent")
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(ua, "queue-checker/") {
			agents["direct"] = ua
		} else {
			agents["sdk"] = ua
		}
	})
	ctx := context.Background()
	f, err := New(ctx, Options{Region: "us-west-2", EndpointURL: proxy.URL, Version: "1.2.3 (rc)", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := &sqs.GetQueueAttributesInput{QueueUrl: aws.String(moto.URL + "/123456789012/no-such-queue")}
	_, _ = f.SQSAttributes("us-west-2").GetQueueAttributes(ctx, in)
	_, _ = f.SQS("us-west-2").GetQueueAttributes(ctx, in)
	mu.Lock()
	defer mu.Unlock()
	direct, sdk := agents["direct"], agents["sdk"]
	if want := "queue-checker/1.2.3--rc- aws-sdk-go-v2/" + aws.SDKVersion + " "; !strings.HasPrefix(direct, want) {
		t.Errorf("direct User-Agent %q, want it to open with %q", direct, want)
	}
	if !strings.Contains(sdk, "queue-checker/1.2.3--rc-") {
		t.Errorf("SDK User-Agent %q does not name the checker's version", sdk)
	}
	parts := strings.Fields(direct)
	for _, prefix := range []string{"aws-sdk-go-v2/", "ua/", "os/", "lang/go#", "md/GOOS#", "md/GOARCH#", "api/sqs#"} {
		var sdkPart string
		for _, p := range strings.Fields(sdk) {
			if strings.HasPrefix(p, prefix) {
				sdkPart = p
			}
		}
		if sdkPart == "" {
			t.Errorf("the SDK's User-Agent %q has no %s part", sdk, prefix)
			continue
		}
		if !slices.Contains(parts, sdkPart) {
			t.Errorf("direct User-Agent %q lacks the SDK's %s", direct, sdkPart)
		}
	}
}

// TestQueueAttributesClient: Options.SQSClient chooses the caller, the
// direct one by default; an unknown value is refused.
