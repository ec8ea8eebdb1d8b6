// Whether XGrammar's jump-forward string is short in every state of a grammar. XGrammar 0.1.27's
// findJumpForwardString follows the grammar for as long as one character is possible, with no
// limit: where a rule can never end (`root ::= "[" root "]"`, a schema whose required property
// is itself) it runs until the WASM module aborts, and a long forced text (ten thousand required
// items of a long const) is walked whole at each call. The text it returns is a prefix of every
// way to finish from that state, so it is no longer than the shortest of them: when every rule
// can end and no sequence of the grammar needs more than `cap` characters to end, each pending
// rule adds at most `cap`. Read from the grammar as XGrammar prints it; anything not understood
// answers false (the text a grammar forces is then left to the model, as before).

type Node =
  | { kind: 'len'; n: number } // a string, a character class (1) or one under `*` (0), a lookahead (0)
  | { kind: 'rule'; name: string }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number };

const RULE = /^([A-Za-z_][A-Za-z0-9_]*) ::= /gm;

/** Whether every rule can end and no sequence needs more than `cap` characters to. */
export function jumpForwardIsBounded(ebnf: string, cap = 4096): boolean {
  let rules: Map<string, Node>;
  try {
    rules = parseRules(ebnf);
  } catch {
    return false;
  }
  if (rules.size === 0) return false;
  const min = new Map<string, number>([...rules.keys()].map((k) => [k, Infinity]));
  let longest = 0;
  const measure = (node: Node, track: boolean): number => {
    switch (node.kind) {
      case 'len':
        return node.n;
      case 'rule': {
        const m = min.get(node.name);
        if (m === undefined) throw new Error(`no rule ${node.name}`);
        return m;
      }
      case 'seq': {
        let sum = 0;
        for (const item of node.items) sum += measure(item, track);
        if (track) longest = Math.max(longest, sum);
        return sum;
      }
      case 'alt': {
        let best = Infinity;
        for (const option of node.options) best = Math.min(best, measure(option, track));
        return best;
      }
      case 'repeat':
        return node.min === 0 ? (measure(node.node, track), 0) : node.min * measure(node.node, track);
    }
  };
  try {
    // Shortest lengths only fall, from Infinity; a sweep that changes nothing is the answer. Sweeps
    // go both ways (XGrammar prints a rule before or after those it uses); a grammar that needs
    // more than this is not worth the wait (and is treated as unbounded).
    const order = [...rules];
    for (let sweep = 0; ; sweep++) {
      if (sweep === 200) return false;
      let changed = false;
      order.reverse();
      for (const [name, body] of order) {
        const m = measure(body, false);
        if (m < min.get(name)!) (min.set(name, m), (changed = true));
      }
      if (!changed) break;
    }
    if ([...min.values()].some((m) => !Number.isFinite(m))) return false;
    for (const body of rules.values()) measure(body, true);
  } catch {
    return false;
  }
  return longest <= cap;
}

function parseRules(ebnf: string): Map<string, Node> {
  const rules = new Map<string, Node>();
  const starts = [...ebnf.matchAll(RULE)];
  starts.forEach((m, i) => {
    const from = m.index + m[0].length;
    const to = i + 1 < starts.length ? starts[i + 1]!.index : ebnf.length;
    rules.set(m[1]!, new Parser(ebnf.slice(from, to)).body());
  });
  return rules;
}

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  body(): Node {
    const node = this.alt();
    this.space();
    if (this.at !== this.text.length) throw new Error(`unexpected ${this.text.slice(this.at, this.at + 20)}`);
    return node;
  }

  private alt(): Node {
    const options = [this.seq()];
    while (this.eat('|')) options.push(this.seq());
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  private seq(): Node {
    const items: Node[] = [];
    for (;;) {
      this.space();
      const c = this.text[this.at];
      if (c === undefined || c === '|' || c === ')') break;
      items.push(this.quantified(this.atom()));
    }
    return { kind: 'seq', items };
  }

  private atom(): Node {
    const c = this.text[this.at]!;
    if (c === '"') return { kind: 'len', n: this.quoted('"') };
    if (c === '[') {
      this.quoted(']', '[');
      if (this.text[this.at] === '*') return this.at++, { kind: 'len', n: 0 };
      return { kind: 'len', n: 1 };
    }
    if (this.text.startsWith('(=', this.at)) {
      this.at += 2;
      this.alt(); // a lookahead reads ahead and takes nothing
      this.expect(')');
      return { kind: 'len', n: 0 };
    }
    if (c === '(') {
      this.at++;
      const inner = this.alt();
      this.expect(')');
      return inner;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.at, this.at + 256))?.[0];
    if (!name) throw new Error(`unexpected ${c}`);
    this.at += name.length;
    if (name === 'TagDispatch' && this.text[this.at] === '(') {
      // Free text until a trigger (the jump-forward stops there); what a trigger starts is a rule of its own.
      this.balanced();
      return { kind: 'len', n: 0 };
    }
    return { kind: 'rule', name };
  }

  private quantified(node: Node): Node {
    const c = this.text[this.at];
    if (c === '*' || c === '?') return this.at++, { kind: 'repeat', node, min: 0 };
    if (c === '+') return this.at++, { kind: 'repeat', node, min: 1 };
    const count = /^\{\s*(\d+)\s*(?:,\s*\d*\s*)?\}/.exec(this.text.slice(this.at, this.at + 40));
    if (count) return (this.at += count[0].length), { kind: 'repeat', node, min: Number(count[1]) };
    return node;
  }

  /** Reads a quoted string or a character class; returns the characters it holds (escapes as one). */
  private quoted(close: string, open = close): number {
    this.expect(open);
    let n = 0;
    for (;;) {
      const c = this.text[this.at++];
      if (c === undefined) throw new Error('unterminated');
      if (c === close) return n;
      if (c === '\\') this.at++;
      n++;
    }
  }

  /** Skips a parenthesised group, strings and classes in it included. */
  private balanced(): void {
    let depth = 0;
    do {
      const c = this.text[this.at];
      if (c === undefined) throw new Error('unbalanced');
      if (c === '"') this.quoted('"');
      else if (c === '[') this.quoted(']', '[');
      else {
        if (c === '(') depth++;
        if (c === ')') depth--;
        this.at++;
      }
    } while (depth > 0);
  }

  private space(): void {
    for (let c = this.text.charCodeAt(this.at); c === 32 || c === 10 || c === 13 || c === 9; c = this.text.charCodeAt(++this.at));
  }

  private eat(c: string): boolean {
    this.space();
    if (this.text[this.at] !== c) return false;
    this.at++;
    return true;
  }

  private expect(c: string): void {
    if (!this.eat(c)) throw new Error(`expected ${c}`);
  }
}
