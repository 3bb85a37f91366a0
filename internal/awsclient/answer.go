package awsclient

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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
