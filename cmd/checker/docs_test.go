package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the project's manuals: the README and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	for _, extra := range []string{"../../deploy/ecs/README.md", "../../examples/worker/README.md"} {
		if _, err := os.Stat(extra); err == nil {
			files = append(files, extra)
		}
	}
	return files
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	mdFence   = regexp.MustCompile("(?ms)^```[^\n]*\n(.*?)^```")
)

// anchors returns the anchors GitHub makes of a document's headings:
// lower case, punctuation but hyphens and underscores dropped, spaces
// turned to hyphens, a repeated anchor numbered.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(stripFences(doc), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+string(rune('0'+n))] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// stripFences blanks the fenced code blocks of a document, whose lines are
// not headings or links.
func stripFences(doc string) string {
	return mdFence.ReplaceAllStringFunc(doc, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
}

// Every relative link of the manuals reaches a file of the repository, and
// every anchor a heading of its target.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		doc := stripFences(string(text))
		for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: no such file", file, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %s: %s has no heading for #%s", file, target, dest, anchor)
			}
		}
	}
}

// docCommands returns every checker command line in the manuals' shell
// blocks, continuation lines joined, with what follows a pipe, a && or a
// comment cut off.
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	lead := regexp.MustCompile(`^(?:\$ )?(?:\./)?(?:bin/checker|checker|go run \./cmd/checker)(?: |$)`)
	for _, file := range docFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range mdFence.FindAllStringSubmatch(string(text), -1) {
			joined := strings.ReplaceAll(block[1], "\\\n", " ")
			for _, line := range strings.Split(joined, "\n") {
				line = strings.TrimSpace(line)
				loc := lead.FindStringIndex(line)
				if loc == nil {
					continue
				}
				for _, sep := range []string{" | ", " && ", " # ", " > ", " 2>", " &"} {
					if i := strings.Index(line, sep); i >= 0 {
						line = line[:i]
					}
				}
				out[file] = append(out[file], line[loc[1]:])
			}
		}
	}
	return out
}

// shellWords splits a command line as a shell does for plain words and
// single or double quotes.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Every checker command the manuals show names a command that exists and
// flags it accepts, with values of the right kind: each is parsed with -h
// after it, which stops the command once its flags are read. Placeholders
// in capitals (FILE, ADDR) and shell variables are left alone.
func TestDocsCommandsParse(t *testing.T) {
	t.Parallel()
	placeholder := regexp.MustCompile(`[A-Z][A-Z_]{2,}|\$|<|\.\.\.|…`)
	n := 0
	for file, lines := range docCommands(t) {
		for _, line := range lines {
			if placeholder.MatchString(line) {
				continue
			}
			args := shellWords(line)
			var out, errb bytes.Buffer
			code := run(context.Background(), append(args, "-h"), &out, &errb)
			if code != 0 {
				t.Errorf("%s: `checker %s`: exit %d:\n%s", file, line, code, firstLines(errb.String(), 3))
			}
			n++
		}
	}
	if n < 5 {
		t.Errorf("only %d commands found in the manuals: the extraction is broken", n)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestReadmeQuickStart: the README's quick start is two commands, the
// demo and the tests, and tells a new user what the first run costs.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Quick start\n")
	if i < 0 {
		t.Fatal("README.md has no ## Quick start")
	}
	section := doc[i+1:]
	section = section[:strings.Index(section[1:], "\n## ")+1]
	var commands []string
	for _, m := range mdFence.FindAllStringSubmatch(section, -1) {
		commands = append(commands, strings.TrimSpace(m[1]))
	}
	if want := []string{"go run ./cmd/checker demo --speed 10", "make test"}; strings.Join(commands, "\n") != strings.Join(want, "\n") {
		t.Errorf("the quick start's commands are %q, want exactly %q", commands, want)
	}
	for _, want := range []string{"440 MB", "minutes", "281 s"} {
		if !strings.Contains(section, want) {
			t.Errorf("the quick start does not say %q: what the first run downloads and how long it takes", want)
		}
	}
}
