package main

import (
	"context"
	"fmt"
	"io"

	"github.com/queuechecker/queue-checker/internal/config"
)

// cmdValidate checks a configuration file. Valid: exit 0 and
// "FILE: ok (N groups)" on stdout, with any notes on stderr. Invalid: exit 2
// and one line per problem on stderr, "FILE:LINE: PATH: MESSAGE" (without
// LINE when the key is absent from the file). A file that cannot be read or
// parsed is exit 2 as well. With --check-aws a valid configuration is also
// read against AWS (see checkAWS): each thing that does not answer is a
// line "FILE: aws: PATH: MESSAGE", and exit 1.
func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stderr)
	flagValue := fs.String("config", "", configHelp)
	online := fs.Bool("check-aws", false, "also read what the configuration names in AWS, changing nothing: the lease table, every queue and every fleet")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	src, err := sourceFlag(*flagValue)
	if err != nil {
		fs.Usage()
		return err
	}
	path := &src.name
	count := func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", n, noun)
	}
	cfg, _, err := src.load(ctx)
	if err != nil {
		problems := config.Problems(err)
		if len(problems) == 0 {
			return &exitError{code: 2, err: err}
		}
		for _, p := range problems {
			if _, werr := fmt.Fprintln(stderr, problemLine(*path, p)); werr != nil {
				return werr
			}
		}
		return &exitError{code: 2, err: fmt.Errorf("%s: invalid configuration: %s", *path, count(len(problems), "problem"))}
	}
	for _, n := range cfg.Notes() {
		if _, err := fmt.Fprintf(stderr, "%s: note: %v\n", *path, n); err != nil {
			return err
		}
	}
	if *online {
		problems, err := checkAWS(ctx, cfg)
		if err != nil {
			return fmt.Errorf("%s: check against AWS: %w", *path, err)
		}
		for _, p := range problems {
			if _, werr := fmt.Fprintf(stderr, "%s: aws: %v\n", *path, p); werr != nil {
				return werr
			}
		}
		if len(problems) > 0 {
			return &exitError{code: 1, err: fmt.Errorf("%s: valid, but %s in AWS", *path, count(len(problems), "problem"))}
		}
		_, err = fmt.Fprintf(stdout, "%s: ok (%s; checked against AWS)\n", *path, count(len(cfg.Groups), "group"))
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: ok (%s)\n", *path, count(len(cfg.Groups), "group"))
	return err
}

// problemLine formats a problem the way compilers do, so that editors can
// jump to it: "FILE:LINE: PATH: MESSAGE", or "FILE: PATH: MESSAGE".
func problemLine(file string, p *config.FieldError) string {
	bare := &config.FieldError{Path: p.Path, Msg: p.Msg}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", file, p.Line, bare)
	}
	return fmt.Sprintf("%s: %v", file, bare)
}
