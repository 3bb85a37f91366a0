package awsclient

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithy "github.com/aws/smithy-go"
)

// decodeAttributes reads the Attributes of a GetQueueAttributes answer.
// SQS's answers are compact JSON with plain strings, which
// plainAttributes reads without reflection; anything else (spaces,
// escapes, other members) goes through encoding/json.
func decodeAttributes(body []byte) (map[string]string, error) {
	if attrs, ok := plainAttributes(body); ok {
		return attrs, nil
	}
	var answer struct {
		Attributes map[string]string `json:"Attributes"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, err
	}
	return answer.Attributes, nil
}

// plainAttributes reads exactly {"Attributes":{"k":"v",...}} or {}, with
// no spaces and strings free of escapes and control characters; ok is
// false for anything else.
func plainAttributes(b []byte) (attrs map[string]string, ok bool) {
	if string(b) == "{}" {
		return nil, true
	}
	const open = `{"Attributes":{`
	if !bytes.HasPrefix(b, []byte(open)) {
		return nil, false
	}
	b = b[len(open):]
	attrs = make(map[string]string, 4)
	if len(b) > 0 && b[0] == '}' {
		return attrs, string(b) == "}}"
	}
	for {
		k, rest, ok := plainBytes(b)
		if !ok || len(rest) == 0 || rest[0] != ':' {
			return nil, false
		}
		v, rest, ok := plainString(rest[1:])
		if !ok || len(rest) == 0 {
			return nil, false
		}
		attrs[attributeName(k)] = v
		switch rest[0] {
		case ',':
			b = rest[1:]
		case '}':
			return attrs, string(rest) == "}}"
		default:
			return nil, false
		}
	}
}

// plainString reads a JSON string without escapes or control characters
// at the start of b, and what follows it. Bytes of 0x80 and above are
// taken only when they are valid UTF-8, as encoding/json would keep them.
func plainString(b []byte) (s string, rest []byte, ok bool) {
	v, rest, ok := plainBytes(b)
	return string(v), rest, ok
}

// plainBytes is plainString without the copy.
func plainBytes(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			if !utf8.Valid(b[1:i]) {
				return nil, nil, false
			}
			return b[1:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// attributeName is name as a string, without a copy for the names the
// poller asks for.
func attributeName(name []byte) string {
	switch string(name) {
	case "ApproximateNumberOfMessages":
		return "ApproximateNumberOfMessages"
	case "ApproximateNumberOfMessagesNotVisible":
		return "ApproximateNumberOfMessagesNotVisible"
	case "ApproximateNumberOfMessagesDelayed":
		return "ApproximateNumberOfMessagesDelayed"
	case "QueueArn":
		return "QueueArn"
	case "FifoQueue":
		return "FifoQueue"
	}
	return string(name)
}

// decodeError turns an error answer into the API error the SDK would
// return. SQS answers AWS JSON 1.0 in query-compatible mode: the
// x-amzn-query-error header carries the query protocol's code and fault
// ("AWS.SimpleQueueService.NonExistentQueue;Sender"), which the SDK
// reports in place of the JSON shape name. An answer in XML (the query
// protocol's error document, as a proxy or an emulator may send for a
// refused signature) is read too; a body that is neither keeps its HTTP
// status as the code, so that the failure is still a client or a server
// error rather than a malformed answer.
func decodeError(h http.Header, status int, body []byte) error {
	var info struct {
		Type         string `json:"__type"`
		Code         string `json:"code"`
		Message      string `json:"message"`
		MessageUpper string `json:"Message"`
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
	case trimmed[0] == '{':
		if err := json.Unmarshal(trimmed, &info); err != nil {
			return &smithy.DeserializationError{Err: fmt.Errorf("decode the error answer (HTTP %d): %w", status, err), Snapshot: body}
		}
	case trimmed[0] == '<':
		var doc struct { // <ErrorResponse><Error> or <Response><Errors><Error>
			Code        string `xml:"Error>Code"`
			Message     string `xml:"Error>Message"`
			ListCode    string `xml:"Errors>Error>Code"`
			ListMessage string `xml:"Errors>Error>Message"`
		}
		if xml.Unmarshal(trimmed, &doc) == nil {
			info.Code, info.Message = cmp.Or(doc.Code, doc.ListCode), cmp.Or(doc.Message, doc.ListMessage)
		}
	}
	code := h.Get("X-Amzn-Errortype")
	if info.Code != "" {
		code = info.Code
	}
	if info.Type != "" {
		code = info.Type
	}
	code = sanitizeErrorCode(code)
	msg := info.Message
	if msg == "" {
		msg = info.MessageUpper
	}
	fault := smithy.FaultUnknown
	if q := h.Get("X-Amzn-Query-Error"); q != "" {
		qcode, qfault, _ := strings.Cut(q, ";")
		if qcode != "" {
			code = qcode
		}
		switch qfault {
		case "Sender":
			fault = smithy.FaultClient
		case "Receiver":
			fault = smithy.FaultServer
		}
	}
	if code == "" {
		code = fmt.Sprintf("HTTP %d", status)
		if msg == "" && len(trimmed) > 0 {
			msg = string(trimmed[:min(len(trimmed), 200)])
		}
	}
	if fault == smithy.FaultUnknown {
		switch {
		case status >= 500:
			fault = smithy.FaultServer
		case status >= 400:
			fault = smithy.FaultClient
		}
	}
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: fault}
}

// sanitizeErrorCode keeps the shape name of a JSON error type:
// "com.amazonaws.sqs#QueueDoesNotExist:http://..." is QueueDoesNotExist.
func sanitizeErrorCode(code string) string {
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return code
}

// appendRequestBody appends the JSON body of a GetQueueAttributes request.
func appendRequestBody(b []byte, in *sqs.GetQueueAttributesInput) []byte {
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, *in.QueueUrl)
	if len(in.AttributeNames) > 0 {
		b = append(b, `,"AttributeNames":[`...)
		for i, n := range in.AttributeNames {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(n))
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
