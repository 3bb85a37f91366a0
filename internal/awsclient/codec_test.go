package awsclient

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	smithy "github.com/aws/smithy-go"
	"github.com/queuechecker/queue-checker/internal/model"
)

var answerSamples = []string{
	`{}`,
	`{"Attributes":{}}`,
	cannedAttributes,
	`{"Attributes":{"ApproximateNumberOfMessages":"12345678"}}`,
	`{"Attributes":{"a":"1","a":"2"}}`,
	`{"Attributes":{"k\u00e9":"v"}}`,
	`{"Attributes":{"ké":"v"}}`,
	`{"Attributes":{"k":"v\"w"}}`,
	`{ "Attributes" : { "k" : "v" } }`,
	`{"Attributes":{"k":"v"},"Other":1}`,
	`{"Attributes":{"k":"v"}}x`,
	`{"Attributes":{"k":"v"}`,
	`{"Attributes":{"k":1}}`,
	`{"Attributes":{"k":"v",}}`,
	`{"Attributes":null}`,
	"{\"Attributes\":{\"k\":\"\xff\"}}",
	`[]`,
	``,
}

// TestDecodeAttributesAgreesWithEncodingJSON: every sample decodes to
// what encoding/json makes of it, and fails where it fails.
func TestDecodeAttributesAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range answerSamples {
		checkAgainstEncodingJSON(t, []byte(s))
	}
	if _, ok := plainAttributes([]byte(cannedAttributes)); !ok {
		t.Errorf("SQS's own answer shape is not read without reflection")
	}
}

func FuzzDecodeAttributes(f *testing.F) {
	for _, s := range answerSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstEncodingJSON)
}

func checkAgainstEncodingJSON(t *testing.T, b []byte) {
	var want struct {
		Attributes map[string]string `json:"Attributes"`
	}
	wantErr := json.Unmarshal(b, &want)
	got, err := decodeAttributes(b)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
	}
	if err == nil && (!maps.Equal(got, want.Attributes) || (got == nil) != (want.Attributes == nil)) {
		t.Fatalf("%q: %v, encoding/json %v", b, got, want.Attributes)
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
