package awsclient

import (
	"encoding/json"
	"maps"
	"testing"
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
