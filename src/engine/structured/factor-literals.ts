// A workaround for an XGrammar 0.1.27 matcher bug (the WASM build on npm; upstream
// issue mlc-ai/xgrammar#618 shows the same family): a rule of string-literal
// alternatives where one runs on with a repeated character, such as an enum
// ("aa" | "a") or a regex's (redd|red), also accepts "aaaa" and "redddd". Factoring
// the alternatives into a trie ("a" ("a" | "")) keeps the matcher exact, so such rules
// are rewritten that way before compiling: in a schema's EBNF as XGrammar writes it
// (`x ::= ("\"aa\"") | ("\"a\"")`) and in a normalized grammar
// (`x ::= (("r" "e" "d" "d") | ("r" "e" "d"))`).

const LITERAL = String.raw`"(?:[^"\\]|\\.)*"`;
const SEQUENCE = String.raw`\(${LITERAL}(?: ${LITERAL})*\)`;
const ALTERNATIVES = new RegExp(String.raw`^(\w+) ::= (\()?(${SEQUENCE}(?: \| ${SEQUENCE})+)(\))?$`);

/** A literal's body split into units: a character, or one escape sequence. */
function units(literal: string): string[] {
  return literal.slice(1, -1).match(/\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|[\s\S]/gu) ?? [];
}

interface Node {
  children: Map<string, Node>;
  end: boolean;
}

function emit(node: Node): string {
  const alts: string[] = [];
  for (const [unit, child] of node.children) {
    // Follow a single path as far as it goes without a branch or an end.
    let text = unit;
    let n = child;
    while (!n.end && n.children.size === 1) {
      const [[u, next]] = [...n.children];
      text += u;
      n = next!;
    }
    const rest = n.children.size ? ` ${emit(n)}` : '';
    alts.push(`"${text}"${rest}`);
  }
  if (node.end) alts.push('""');
  return alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
}

export function factorLiteralAlternatives(ebnf: string): string {
  return ebnf
    .split('\n')
    .map((line) => {
      const m = ALTERNATIVES.exec(line);
      if (!m || Boolean(m[2]) !== Boolean(m[4])) return line;
      const root: Node = { children: new Map(), end: false };
      for (const seq of m[3]!.match(new RegExp(SEQUENCE, 'g'))!) {
        let n = root;
        for (const u of seq.match(new RegExp(LITERAL, 'g'))!.flatMap(units)) {
          if (!n.children.has(u)) n.children.set(u, { children: new Map(), end: false });
          n = n.children.get(u)!;
        }
        n.end = true;
      }
      return `${m[1]} ::= ${emit(root)}`;
    })
    .join('\n');
}
