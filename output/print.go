package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/sandscope/sandscope/internal/textsafe"
)

// Output is a parsed -o: kubectl's names and meanings.
type Output struct {
	Format   string // table, wide, json, yaml, name, jsonpath
	Template string // the JSONPath template of jsonpath
}

// Formats lists what -o takes, for help and completion.
var Formats = []string{"table", "wide", "json", "yaml", "name", "jsonpath=", "jsonpath-file="}

// ParseOutput reads -o: table (also ""), wide, json, yaml, name,
// jsonpath=TEMPLATE or jsonpath-file=FILE (the file is read here).
func ParseOutput(s string) (Output, error) {
	switch s {
	case "", "table":
		return Output{Format: "table"}, nil
	case "wide", "json", "yaml", "name":
		return Output{Format: s}, nil
	}
	if tmpl, ok := strings.CutPrefix(s, "jsonpath="); ok {
		return jsonPathOutput(tmpl)
	}
	if file, ok := strings.CutPrefix(s, "jsonpath-file="); ok {
		data, err := os.ReadFile(file)
		if err != nil {
			return Output{}, fmt.Errorf("-o jsonpath-file: %w", err)
		}
		return jsonPathOutput(string(data))
	}
	return Output{}, fmt.Errorf("-o must be one of table, wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE; not %q", s)
}

func jsonPathOutput(tmpl string) (Output, error) {
	if strings.TrimSpace(tmpl) == "" {
		return Output{}, fmt.Errorf("-o jsonpath needs a template, e.g. -o jsonpath='{.items[*].metadata.name}'")
	}
	if _, err := printers.NewJSONPathPrinter(tmpl); err != nil {
		return Output{}, fmt.Errorf("-o jsonpath: %w", err)
	}
	return Output{Format: "jsonpath", Template: tmpl}, nil
}

// PrintOptions are kubectl's knobs of `get`.
type PrintOptions struct {
	AllNamespaces bool // a NAMESPACE column first
	NoHeaders     bool
	// Single prints the one item itself, not a List of one, as kubectl does
	// for `get KIND NAME -o json`.
	Single bool
	Now    time.Time
}

// Print writes items in the output's format with kubectl's printers. Text
// that reaches a terminal raw (table cells, names, JSONPath results) is
// made safe first. json keeps every string whole: what a terminal would
// obey is a \u escape (textsafe.EscapeJSON). yaml writes control
// characters as YAML escapes (\x7F, \x9B, \N) and shows bidi controls,
// which the YAML emitter writes raw, as U+FFFD.
func Print(w io.Writer, items *Items, out Output, opts PrintOptions) error {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	switch out.Format {
	case "table", "wide":
		table := items.Table(opts.AllNamespaces, opts.Now)
		return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: opts.NoHeaders, Wide: out.Format == "wide"}).PrintObj(table, w)
	case "name":
		refs, err := items.Refs()
		if err != nil {
			return err
		}
		return sanitised(w, func(w io.Writer) error { return (&printers.NamePrinter{}).PrintObj(refs, w) })
	}
	obj, err := items.unstructured(opts.Single)
	if err != nil {
		return err
	}
	switch out.Format {
	case "json":
		var buf bytes.Buffer
		if err := (&printers.JSONPrinter{}).PrintObj(obj, &buf); err != nil {
			return err
		}
		_, err := w.Write(textsafe.EscapeJSON(buf.Bytes()))
		return err
	case "yaml":
		doc, err := yamlOf(obj)
		if err != nil {
			return err
		}
		return sanitised(w, func(w io.Writer) error { _, err := w.Write(doc); return err })
	case "jsonpath":
		p, err := printers.NewJSONPathPrinter(out.Template)
		if err != nil {
			return fmt.Errorf("-o jsonpath: %w", err)
		}
		p.AllowMissingKeys(true) // kubectl's default (--allow-missing-template-keys)
		return sanitised(w, func(w io.Writer) error { return oneLineError(p.PrintObj(obj, w)) })
	}
	return fmt.Errorf("unknown output format %q", out.Format)
}

// yamlOf is what kubectl's YAMLPrinter writes for one object (its JSON
// turned into YAML), from JSON whose control characters are escaped
// first. The printer hands its JSON to a YAML parser raw, and the parser
// refuses DEL and C1 controls: one tenant's termination reason made the
// whole list fail, for everyone. Read from escapes, they reach the YAML
// emitter as characters, which it writes as YAML escapes.
func yamlOf(obj runtime.Object) ([]byte, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding yaml: %w", err)
	}
	doc, err := yaml.JSONToYAML(textsafe.EscapeJSON(js))
	if err != nil {
		return nil, fmt.Errorf("encoding yaml: %w", err)
	}
	return doc, nil
}

// sanitised runs print onto a textsafe.Writer over w.
func sanitised(w io.Writer, print func(io.Writer) error) error {
	sw := textsafe.NewWriter(w)
	err := print(sw)
	if ferr := sw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// oneLineError keeps the first line of a JSONPath execution error: the
// printer appends a dump of the whole object to it.
func oneLineError(err error) error {
	if err == nil {
		return nil
	}
	msg, _, _ := strings.Cut(err.Error(), " Printing more information")
	return fmt.Errorf("%s", strings.TrimSpace(msg))
}

// unstructured is the items as one object for json, yaml and jsonpath: a
// List, or with single the one item.
func (it *Items) unstructured(single bool) (runtime.Object, error) {
	objs := it.Objects()
	items := make([]any, len(objs))
	for i, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", it.Resource, err)
		}
		items[i] = m
	}
	if single && len(items) == 1 {
		return &unstructured.Unstructured{Object: items[0].(map[string]any)}, nil
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersion,
		"kind":       KindList,
		"metadata":   map[string]any{},
		"items":      items,
	}}, nil
}

// Table is the items as kubectl's table printer takes them.
func (it *Items) Table(allNamespaces bool, now time.Time) *metav1.Table {
	switch it.Resource {
	case Pods:
		return PodTable(it.Pods, it.sandboxOf, allNamespaces, now)
	case Pools:
		return PoolTable(it.Pools, it.WarmPools, allNamespaces, now)
	case Claims:
		return ClaimTable(it.Claims, allNamespaces, now)
	case Findings:
		return FindingTable(it.Findings, allNamespaces, now)
	}
	return SandboxTable(it.Sandboxes, allNamespaces, now)
}
