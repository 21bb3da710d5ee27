package listing

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

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
// made safe first; json and yaml are escaped by their encoders.
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
		return (&printers.JSONPrinter{}).PrintObj(obj, w)
	case "yaml":
		return (&printers.YAMLPrinter{}).PrintObj(obj, w)
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
