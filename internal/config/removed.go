package config

import "reflect"

// removedKeys are keys that configurations once had, with what replaced
// them: a file that still sets one is refused with this advice rather than
// "unknown key", so that the upgrade says what to do.
var removedKeys = map[reflect.Type]map[string]func(parent string) string{
	reflect.TypeFor[Target](): {
		"peak_window": func(target string) string {
			return "removed: the forecast (" + joinPath(parentPath(target), "forecast") +
				") replaced it; it keeps capacity only for load expected within the start delay, " +
				"from recurring patterns and recent bursts, instead of the highest rate of a window. Delete the key"
		},
	},
}

// removedKey returns the message for key of a mapping decoded into t at
// path, when the key was removed.
func removedKey(t reflect.Type, key, path string) (string, bool) {
	msg, ok := removedKeys[t][key]
	if !ok {
		return "", false
	}
	return msg(path), true
}
