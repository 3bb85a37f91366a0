package awsclient

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	smithy "github.com/aws/smithy-go"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestQueueAttributesMatchTheSDK asks moto for a queue holding visible,
// in-flight and delayed messages, and for a queue that does not exist,
// through the SDK's client and through the direct caller: the same
// attributes, and the same error code, fault and class.
func TestQueueAttributesMatchTheSDK(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	f, err := New(ctx, Options{Region: "us-west-2", EndpointURL: moto.URL})
	if err != nil {
		t.Fatal(err)
	}
	client := f.SQS("us-west-2")
	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(awstest.UniqueName(t, "parity"))})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		in := &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageBody: aws.String("m")}
		if i >= 3 {
			in.DelaySeconds = 600
		}
		if _, err := client.SendMessage(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 600}); err != nil {
		t.Fatal(err)
	}
	names := []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		types.QueueAttributeNameQueueArn,
		types.QueueAttributeNameFifoQueue,
	}
	sdkOut, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: names})
	if err != nil {
		t.Fatal(err)
	}
	directOut, err := f.SQSAttributes("us-west-2").GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: names})
	if err != nil {
		t.Fatal(err)
	}
	// Five sent, two of them delayed, one of the three others received:
	// what was sent, not what the SDK says.
	want := map[string]string{"ApproximateNumberOfMessages": "2", "ApproximateNumberOfMessagesNotVisible": "1", "ApproximateNumberOfMessagesDelayed": "2"}
	for k, v := range want {
		if directOut.Attributes[k] != v {
			t.Errorf("direct %s = %q, want %q", k, directOut.Attributes[k], v)
		}
	}
	if len(directOut.Attributes) != len(sdkOut.Attributes) {
		t.Errorf("direct answered %d attributes, the SDK %d: %v against %v", len(directOut.Attributes), len(sdkOut.Attributes), directOut.Attributes, sdkOut.Attributes)
	}
	for k, v := range sdkOut.Attributes {
		if directOut.Attributes[k] != v {
			t.Errorf("%s: direct %q, SDK %q", k, directOut.Attributes[k], v)
		}
	}

	missing := &sqs.GetQueueAttributesInput{QueueUrl: aws.String(moto.URL + "/123456789012/no-such-queue"), AttributeNames: names[:1]}
	_, sdkErr := client.GetQueueAttributes(ctx, missing)
	_, directErr := f.SQSAttributes("us-west-2").GetQueueAttributes(ctx, missing)
	var sdkAPI, directAPI smithy.APIError
	if !errors.As(sdkErr, &sdkAPI) || !errors.As(directErr, &directAPI) {
		t.Fatalf("want API errors, got SDK %v and direct %v", sdkErr, directErr)
	}
	if sdkAPI.ErrorCode() != directAPI.ErrorCode() || sdkAPI.ErrorFault() != directAPI.ErrorFault() {
		t.Errorf("direct error %q (fault %v), SDK %q (fault %v)", directAPI.ErrorCode(), directAPI.ErrorFault(), sdkAPI.ErrorCode(), sdkAPI.ErrorFault())
	}
	if got, want := Classify(directErr), Classify(sdkErr); got != want || got != model.ErrClassClient {
		t.Errorf("direct class %q, SDK class %q, want %q", got, want, model.ErrClassClient)
	}
	var opErr *smithy.OperationError
	if !errors.As(directErr, &opErr) || opErr.Operation() != "GetQueueAttributes" || opErr.Service() != "SQS" {
		t.Errorf("direct error %v does not name SQS GetQueueAttributes", directErr)
	}
}

// signingMoto starts a moto server that checks every request's Signature
// Version 4 with botocore's signer and the caller's IAM permissions, and
// returns it with the access key of a user allowed sqs:*.
func signingMoto(t *testing.T) (moto *awstest.Moto, keyID, secret string) {
	t.Helper()
	awstest.Shared(t) // fails or skips as every integration test does when moto is missing
	ctx := context.Background()
	// CreateUser, CreateAccessKey and PutUserPolicy are the unchecked
	// requests; everything after them is checked.
	moto, err := awstest.Start(ctx, "INITIAL_NO_AUTH_ACTION_COUNT=3")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(moto.Close)

	iam := func(form url.Values) []byte {
		t.Helper()
		form.Set("Version", "2010-05-08")
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, moto.URL+"/", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		// moto routes a request by the service its credential scope names;
		// these first requests are not checked.
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20261201/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("IAM %s: HTTP %d: %s", form.Get("Action"), resp.StatusCode, body)
		}
		return body
	}
	user := "checker"
	iam(url.Values{"Action": {"CreateUser"}, "UserName": {user}})
	var key struct {
		ID     string `xml:"CreateAccessKeyResult>AccessKey>AccessKeyId"`
		Secret string `xml:"CreateAccessKeyResult>AccessKey>SecretAccessKey"`
	}
	if err := xml.Unmarshal(iam(url.Values{"Action": {"CreateAccessKey"}, "UserName": {user}}), &key); err != nil || key.ID == "" {
		t.Fatalf("access key: %v (%+v)", err, key)
	}
	policy, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]string{{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}})
	iam(url.Values{"Action": {"PutUserPolicy"}, "UserName": {user}, "PolicyName": {"sqs"}, "PolicyDocument": {string(policy)}})
	return moto, key.ID, key.Secret
}

// signedFactory is a factory for endpoint signing with the given key, one
// attempt per call.
func signedFactory(t *testing.T, endpoint, keyID, secret string) *Factory {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", keyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	f, err := New(context.Background(), Options{Region: "eu-central-1", EndpointURL: endpoint, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestQueueAttributesSignature runs a moto server that checks every
// request's Signature Version 4 with botocore's signer and the caller's
// IAM permissions: the direct caller's requests are accepted with the
// right secret and refused with a wrong one.
func TestQueueAttributesSignature(t *testing.T) {
	moto, keyID, secret := signingMoto(t)
	ctx := context.Background()
	good := signedFactory(t, moto.URL, keyID, secret)
	created, err := good.SQS("eu-central-1").CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("signed")})
	if err != nil {
		t.Fatalf("the SDK's own signed request was refused: %v", err)
	}
	in := &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}}
	callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := good.SQSAttributes("eu-central-1").GetQueueAttributes(callCtx, in)
	if err != nil {
		t.Fatalf("signed with the right secret: %v", err)
	}
	if out.Attributes["ApproximateNumberOfMessages"] != "0" {
		t.Errorf("attributes %v", out.Attributes)
	}

	bad := signedFactory(t, moto.URL, keyID, secret+"x")
	_, err = bad.SQSAttributes("eu-central-1").GetQueueAttributes(callCtx, in)
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "SignatureDoesNotMatch" {
		t.Fatalf("signed with a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	if got := Classify(err); got != model.ErrClassClient {
		t.Errorf("Classify = %q, want %q", got, model.ErrClassClient)
	}
}

// TestQueueAttributesClockSkew signs with a clock 10 minutes off, behind
// and ahead, through a proxy that refuses signing times more than 5
// minutes from its clock as SQS does (moto checks a signature against the
// time the request names, not against its clock) in front of moto
// checking every signature. The first call is refused once, retried at
// once with the server's time and succeeds, with one attempt allowed by
// the retryer; the later calls succeed at their first request. A refused
// signature whose answer shows no skew (a wrong secret) is not retried.
func TestQueueAttributesClockSkew(t *testing.T) {
	moto, keyID, secret := signingMoto(t)
	ctx := context.Background()
	setup := signedFactory(t, moto.URL, keyID, secret)
	created, err := setup.SQS("eu-central-1").CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("skewed")})
	if err != nil {
		t.Fatal(err)
	}
	in := &sqs.GetQueueAttributesInput{QueueUrl: created.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}}
	proxy := awstest.NewProxy(t, moto.URL)
	proxy.Inject(awstest.MatchSignatureSkewed(), awstest.Fault{Kind: awstest.FaultSignatureExpired})

	for _, off := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
		t.Run(off.String(), func(t *testing.T) {
			proxy.ResetCounts()
			qa := signedFactory(t, proxy.URL, keyID, secret).SQSAttributes("eu-central-1")
			qa.now = func() time.Time { return time.Now().Add(off) }
			for call := range 4 {
				before := proxy.Calls("GetQueueAttributes")
				callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				out, err := qa.GetQueueAttributes(callCtx, in)
				cancel()
				if err != nil {
					t.Fatalf("call %d: %v", call, err)
				}
				if out.Attributes["ApproximateNumberOfMessages"] != "0" {
					t.Errorf("call %d: attributes %v", call, out.Attributes)
				}
				want := 1
				if call == 0 {
					want = 2 // refused, then retried
				}
				if got := proxy.Calls("GetQueueAttributes") - before; got != want {
					t.Errorf("call %d: %d requests, want %d", call, got, want)
				}
			}
			if got := proxy.Injected(awstest.FaultSignatureExpired); got != 1 {
				t.Errorf("%d signatures refused for their time, want 1", got)
			}
			// The offset kept is the clock's error, to the Date header's second.
			if got := time.Duration(qa.skew.Load()); (got + off).Abs() > 3*time.Second {
				t.Errorf("offset kept %s, want about %s", got, -off)
			}
		})
	}

	t.Run("wrong secret", func(t *testing.T) {
		proxy.ResetCounts()
		qa := signedFactory(t, proxy.URL, keyID, secret+"x").SQSAttributes("eu-central-1")
		_, err := qa.GetQueueAttributes(ctx, in)
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "SignatureDoesNotMatch" {
			t.Fatalf("signed with a wrong secret: %v, want SignatureDoesNotMatch", err)
		}
		if got := proxy.Calls("GetQueueAttributes"); got != 1 {
			t.Errorf("%d requests, want 1: no clock was off", got)
		}
		if got := qa.skew.Load(); got != 0 {
			t.Errorf("offset %s kept without a clock off", time.Duration(got))
		}
	})
}

// TestQueueAttributesRefusesOptions: a per-call option function, which the
// direct caller cannot apply, is refused with an error and no request.
func TestQueueAttributesRefusesOptions(t *testing.T) {
	moto := awstest.Shared(t)
	proxy := awstest.NewProxy(t, moto.URL)
	f, err := New(context.Background(), Options{Region: "us-west-2", EndpointURL: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	in := &sqs.GetQueueAttributesInput{QueueUrl: aws.String(moto.URL + "/123456789012/any")}
	_, err = f.SQSAttributes("us-west-2").GetQueueAttributes(context.Background(), in, func(o *sqs.Options) { o.Region = "eu-west-1" })
	if !errors.Is(err, errPerCallOptions) {
		t.Errorf("with an option function: %v, want %v", err, errPerCallOptions)
	}
	if n := proxy.Calls(""); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestQueueAttributesClient(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		client string
		direct bool
	}{{"", true}, {SQSClientDirect, true}, {SQSClientSDK, false}} {
		f, err := New(ctx, Options{Region: "us-west-2", SQSClient: tc.client})
		if err != nil {
			t.Fatalf("%q: %v", tc.client, err)
		}
		got := f.QueueAttributesClient("us-west-2")
		if _, isDirect := got.(*QueueAttributes); isDirect != tc.direct {
			t.Errorf("%q: %T", tc.client, got)
		}
		if _, isSDK := got.(*sqs.Client); isSDK == tc.direct {
			t.Errorf("%q: %T", tc.client, got)
		}
	}
	if _, err := New(ctx, Options{Region: "us-west-2", SQSClient: "fast"}); err == nil || !strings.Contains(err.Error(), `"fast"`) {
		t.Errorf("SQSClient fast: %v, want an error naming it", err)
	}
}
