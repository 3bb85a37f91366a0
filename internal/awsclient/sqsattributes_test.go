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

// TestQueueAttributesSignature runs a moto server that checks every
// request's Signature Version 4 with botocore's signer and the caller's
// IAM permissions: the direct caller's requests are accepted with the
// right secret and refused with a wrong one.
func TestQueueAttributesSignature(t *testing.T) {
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

	factory := func(secret string) *Factory {
		t.Helper()
		t.Setenv("AWS_ACCESS_KEY_ID", key.ID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
		t.Setenv("AWS_SESSION_TOKEN", "")
		f, err := New(ctx, Options{Region: "eu-central-1", EndpointURL: moto.URL, MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	good := factory(key.Secret)
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

	bad := factory(key.Secret + "x")
	_, err = bad.SQSAttributes("eu-central-1").GetQueueAttributes(callCtx, in)
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "SignatureDoesNotMatch" {
		t.Fatalf("signed with a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	if got := Classify(err); got != model.ErrClassClient {
		t.Errorf("Classify = %q, want %q", got, model.ErrClassClient)
	}
}

// TestRequestBodyIsJSON checks the request body against encoding/json:
// every queue URL, however odd, reads back as itself.
func TestRequestBodyIsJSON(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"https://sqs.us-east-1.amazonaws.com/123456789012/orders",
		`https://x/1/q"uote\back`,
		"https://x/1/tab\tnew\nline\x01\x1f",
		"https://x/1/ünïcødé-队列",
		"",
	} {
		in := &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []types.QueueAttributeName{"A", "B"}}
		body := appendRequestBody(nil, in)
		var got struct {
			QueueURL       string   `json:"QueueUrl"`
			AttributeNames []string `json:"AttributeNames"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%q: %s does not parse: %v", u, body, err)
		}
		if got.QueueURL != u || len(got.AttributeNames) != 2 || got.AttributeNames[0] != "A" || got.AttributeNames[1] != "B" {
			t.Errorf("%q: read back %+v from %s", u, got, body)
		}
	}
	if body := appendJSONString(nil, "a\xffb"); string(body) != `"a\ufffdb"` {
		t.Errorf("invalid UTF-8 written as %s", body)
	}
}

// TestDecodeError covers the error answers moto and the fault proxy do not
// send: the JSON shape name with a URI suffix, the X-Amzn-ErrorType header,
// the query protocol's XML document and a body that is none of these.
func TestDecodeError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header http.Header
		status int
		body   string
		code   string
		fault  smithy.ErrorFault
		class  string
	}{
		{"json shape with uri", nil, 400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist:http://internal.amazon.com/","message":"gone"}`,
			"QueueDoesNotExist", smithy.FaultClient, model.ErrClassClient},
		{"query-compatible header wins", http.Header{"X-Amzn-Query-Error": {"AWS.SimpleQueueService.NonExistentQueue;Sender"}}, 400,
			`{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"}`, "AWS.SimpleQueueService.NonExistentQueue", smithy.FaultClient, model.ErrClassClient},
		{"throttle by header code", http.Header{"X-Amzn-Query-Error": {"AWS.SimpleQueueService.RequestThrottled;Sender"}}, 400,
			`{"__type":"com.amazonaws.sqs#RequestThrottled"}`, "AWS.SimpleQueueService.RequestThrottled", smithy.FaultClient, model.ErrClassThrottled},
		{"error type header", http.Header{"X-Amzn-Errortype": {"AccessDeniedException:http://x"}}, 403, `{}`,
			"AccessDeniedException", smithy.FaultClient, model.ErrClassClient},
		{"query xml", nil, 403, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>bad key</Message></Error></ErrorResponse>`,
			"InvalidClientTokenId", smithy.FaultClient, model.ErrClassClient},
		{"html from a proxy", nil, 502, `<html><body>Bad Gateway</body></html>`, "HTTP 502", smithy.FaultServer, model.ErrClassServer},
		{"empty", nil, 503, ``, "HTTP 503", smithy.FaultServer, model.ErrClassServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			err := decodeError(h, tc.status, []byte(tc.body))
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("%v is not an API error", err)
			}
			if apiErr.ErrorCode() != tc.code || apiErr.ErrorFault() != tc.fault {
				t.Errorf("code %q fault %v, want %q and %v", apiErr.ErrorCode(), apiErr.ErrorFault(), tc.code, tc.fault)
			}
			if got := Classify(answered(tc.status, err)); got != tc.class {
				t.Errorf("class %q, want %q", got, tc.class)
			}
		})
	}
	// A JSON body that does not parse is a malformed answer, as the SDK
	// has it.
	var deser *smithy.DeserializationError
	if err := decodeError(http.Header{}, 400, []byte(`{"__type":`)); !errors.As(err, &deser) {
		t.Errorf("truncated JSON error: %v, want a deserialization error", err)
	}
}
