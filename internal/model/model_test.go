package model

import (
	"encoding/json"
	"testing"
)

func TestMissingAndPartial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		queues, answered int
		missing, partial bool
	}{
		{"all answered", 3, 3, false, false},
		{"some answered", 3, 2, false, true},
		{"none answered", 3, 0, true, false},
		{"no queues observed", 0, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := GroupSample{Queues: tt.queues, Answered: tt.answered}
			if s.Missing() != tt.missing || s.Partial() != tt.partial {
				t.Fatalf("Missing %v Partial %v, want %v %v", s.Missing(), s.Partial(), tt.missing, tt.partial)
			}
		})
	}
}

// The Decision's JSON keys are a contract with scripts and the status page.
func TestDecisionJSONKeys(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Decision{})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"group", "at", "visible", "in_flight", "delayed", "backlog", "current_workers",
		"in_service_workers", "pending_workers", "draining_workers", "arrival_rate", "backlog_per_worker", "backlog_per_in_service_worker",
		"target_backlog_per_worker", "floors", "recommended_workers", "desired_workers", "capped",
		"held", "hold_reason", "partial", "diagnosis", "reasons", "utilization", "drain_seconds",
		"oldest_age_seconds", "oldest_age_at", "paused", "paused_by", "paused_since", "scale_in_off", "pinned", "warnings", "switch_problems", "forecast", "plan", "measured", "need_without_forecast", "bursts", "held_messages", "not_acted"}
	if len(got) != len(want) {
		t.Errorf("%d keys, want %d: %s", len(got), len(want), b)
	}
	for _, k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	for _, k := range []string{"arrival_rate", "backlog_per_in_service_worker", "utilization", "drain_seconds", "oldest_age_seconds"} {
		if string(got[k]) != "null" {
			t.Errorf("%s = %s when unknown, want null", k, got[k])
		}
	}
	var floors map[string]json.RawMessage
	if err := json.Unmarshal(got["floors"], &floors); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"drain", "utilization", "wait", "backlog_per_worker", "utilization_ceiling"} {
		if string(floors[k]) != "null" {
			t.Errorf("floors.%s = %s when unknown, want null", k, floors[k])
		}
	}
}
