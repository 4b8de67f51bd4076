// The exercise editor: CodeMirror 6 with Python, line numbers, Tab indent, Ctrl/Cmd+Enter submit,
// and a gutter that marks the learner's lines where torch.compile broke the graph.
// Exposed as window.PracticeEditor for web/static/app.js (no inline scripts: the page's CSP forbids them).
import {EditorState, StateEffect, StateField, RangeSet} from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, gutter, GutterMarker, Decoration,
} from "@codemirror/view";
import {defaultKeymap, history, historyKeymap, indentWithTab} from "@codemirror/commands";
import {
  indentOnInput, indentUnit, bracketMatching, syntaxHighlighting, defaultHighlightStyle, foldGutter,
} from "@codemirror/language";
import {closeBrackets, closeBracketsKeymap} from "@codemirror/autocomplete";
import {searchKeymap, highlightSelectionMatches} from "@codemirror/search";
import {python} from "@codemirror/lang-python";

const setMarks = StateEffect.define();

class BreakMarker extends GutterMarker {
  constructor(reason) { super(); this.reason = reason; }
  eq(other) { return other.reason === this.reason; }
  toDOM() {
    const el = document.createElement("span");
    el.className = this.reason ? "cm-break-marker" : "cm-break-spacer";  // the spacer only sizes the gutter
    el.textContent = "\u25CF";
    el.title = this.reason;            // textContent/title: never parsed as HTML
    el.setAttribute("aria-label", this.reason);
    return el;
  }
}

// marks: [{line, reason}] -> gutter markers + a line highlight, cleared on the next setMarks.
const marksField = StateField.define({
  create() { return {gutter: RangeSet.empty, lines: Decoration.none}; },
  update(value, tr) {
    let next = {gutter: value.gutter.map(tr.changes), lines: value.lines.map(tr.changes)};
    for (const e of tr.effects) {
      if (!e.is(setMarks)) continue;
      const doc = tr.state.doc;
      const valid = e.value.filter((m) => m.line >= 1 && m.line <= doc.lines)
        .sort((a, b) => a.line - b.line);
      const gutterRanges = [], lineRanges = [];
      for (const m of valid) {
        const pos = doc.line(m.line).from;
        gutterRanges.push(new BreakMarker(m.reason).range(pos));
        lineRanges.push(Decoration.line({attributes: {class: "cm-break-line", title: m.reason}}).range(pos));
      }
      next = {gutter: RangeSet.of(gutterRanges, true), lines: Decoration.set(lineRanges, true)};
    }
    return next;
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.lines),
});

const breakGutter = [
  marksField,
  gutter({class: "cm-break-gutter", markers: (view) => view.state.field(marksField).gutter,
          initialSpacer: () => new BreakMarker("")}),
];

function create(parent, options) {
  const onChange = options.onChange || (() => {});
  const onSubmit = options.onSubmit || (() => {});
  const submitKeys = keymap.of([
    {key: "Mod-Enter", run: () => { onSubmit(); return true; }, preventDefault: true},
  ]);
  const state = EditorState.create({
    doc: options.doc || "",
    extensions: [
      submitKeys,
      lineNumbers(), breakGutter, foldGutter(), highlightActiveLineGutter(),
      history(), drawSelection(), indentOnInput(), bracketMatching(), closeBrackets(),
      highlightActiveLine(), highlightSelectionMatches(),
      syntaxHighlighting(defaultHighlightStyle, {fallback: true}),
      python(),
      EditorState.tabSize.of(4), indentUnit.of("    "),
      keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, indentWithTab]),
      options.nonce ? EditorView.cspNonce.of(options.nonce) : [],
      EditorView.contentAttributes.of({"aria-label": options.label || "code editor"}),
      EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u.state.doc.toString()); }),
    ],
  });
  const view = new EditorView({state, parent});
  // CodeMirror measures line heights only while the editor is in the window; until then it places the
  // gutter with a 14px-per-line estimate. Below the fold (a phone, where the statement comes first) the
  // line numbers were squeezed beside the first lines (issue 13). A pending scroll target makes the
  // next measurement run anyway; a snapshot target only restores the editor's own scroll position
  // (top), so the page itself does not move.
  view.dispatch({effects: view.scrollSnapshot()});
  return {
    view,
    getValue: () => view.state.doc.toString(),
    setValue(text) {
      view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
    },
    setMarks(marks) { view.dispatch({effects: setMarks.of(marks || [])}); },
    focus: () => view.focus(),
  };
}

window.PracticeEditor = {create};
