// Command go-template renders a template the way CAPP v0.9.0 renders user data
// (pkg/cloud/packet/client.go): text/template named "user-data", default options, executed with a
// map[string]interface{} of string values, so a missing key renders "<no value>".
//
// Usage: go-template <data.json> < template > output
// data.json is a JSON object of strings. Parse and execute errors exit 1 with the error on stderr.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: go-template <data.json> < template")
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("reading data: %w", err)
	}
	var strs map[string]string
	if err := json.Unmarshal(raw, &strs); err != nil {
		return fmt.Errorf("data must be a JSON object of strings: %w", err)
	}
	data := make(map[string]interface{}, len(strs))
	for k, v := range strs {
		data[k] = v
	}
	text, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("reading template: %w", err)
	}
	tmpl, err := template.New("user-data").Parse(string(text))
	if err != nil {
		return fmt.Errorf("error parsing userdata template: %w", err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return fmt.Errorf("error executing userdata template: %w", err)
	}
	_, err = io.WriteString(out, b.String())
	return err
}
