// go-template executes a Go text/template exactly as Cluster API Provider Packet v0.9.0 does with
// a machine's bootstrap data (pkg/cloud/packet/client.go NewDevice): the template is named
// "user-data", parsed with the default options and executed against a map of strings, so a
// missing key renders "<no value>".
//
// Usage: go-template --data '{"kubernetesVersion":"v1.30.1"}' < template > output
// The template is read from stdin and the result written to stdout. On a parse or execute error
// nothing is written to stdout, the Go error goes to stderr and the exit status is 1 (2 for bad
// usage). Standard library only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"
)

func main() {
	data := flag.String("data", "{}", "JSON object of strings: the template's data")
	flag.Parse()

	var values map[string]string
	if err := json.Unmarshal([]byte(*data), &values); err != nil {
		fmt.Fprintf(os.Stderr, "--data must be a JSON object of strings: %v\n", err)
		os.Exit(2)
	}
	// CAPP passes map[string]interface{}; the value type decides what a missing key renders.
	templateData := make(map[string]interface{}, len(values))
	for k, v := range values {
		templateData[k] = v
	}

	text, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reading the template from stdin: %v\n", err)
		os.Exit(2)
	}

	tmpl, err := template.New("user-data").Parse(string(text))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := &strings.Builder{}
	if err := tmpl.Execute(out, templateData); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := io.WriteString(os.Stdout, out.String()); err != nil {
		fmt.Fprintf(os.Stderr, "writing the result: %v\n", err)
		os.Exit(2)
	}
}
