//! The blanks between tokens, as Terraform's formatter sets them: two
//! spaces of indentation per open bracket level, one space between most
//! tokens (none inside brackets, around `.`, before `,`, after a unary
//! `-` or `!`, within templates), no trailing blanks, and the `=` of
//! consecutive one-line attributes (and the comments ending consecutive
//! lines) aligned. Only `Token::spaces` changes; token text never does.
//!
//! A logical line ends at a line break token or a line comment; a heredoc
//! belongs to the line it opens on (its lines are literal tokens), so its
//! body is never re-indented. Each line has three cells: the lead, an
//! assignment (from an `=` whose right side closes on the line) and a
//! trailing line comment.

use super::tokens::{Kind, Token};

struct Line {
    /// Token index ranges of the three cells.
    lead: std::ops::Range<usize>,
    assign: Option<std::ops::Range<usize>>,
    comment: Option<usize>,
}

/// Sets the blanks before every token of `toks`.
pub fn layout(toks: &mut [Token]) {
    let lines = split_lines(toks);
    indent(toks, &lines);
    space(toks, &lines);
    align(toks, &lines);
}

/// Bracket balance of `toks`, counted up to a heredoc opener (whose
/// body's sequences do not open anything on this line).
fn balance(toks: &[Token]) -> i32 {
    let mut n = 0;
    for t in toks {
        n += t.nesting();
        if t.kind == Kind::OHeredoc {
            break;
        }
    }
    n
}

fn split_lines(toks: &[Token]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for i in 0..toks.len() {
        if toks[i].ends_line() || i + 1 == toks.len() {
            lines.push(cells(toks, start, i + 1));
            start = i + 1;
        }
    }
    lines
}

fn cells(toks: &[Token], start: usize, end: usize) -> Line {
    let mut lead_end = end;
    let mut comment = None;
    if end - start > 1 && toks[end - 1].kind == Kind::Comment {
        comment = Some(end - 1);
        lead_end = end - 1;
    }
    let mut assign = None;
    if let Some(eq) = (start + 1..lead_end).find(|&i| toks[i].kind == Kind::Equal) {
        if balance(&toks[eq..lead_end]) == 0 {
            assign = Some(eq..lead_end);
            lead_end = eq;
        }
    }
    Line {
        lead: start..lead_end,
        assign,
        comment,
    }
}

fn indent(toks: &mut [Token], lines: &[Line]) {
    // Each entry: how many brackets a line left open.
    let mut open: Vec<i32> = Vec::new();
    for line in lines {
        if line.lead.is_empty() {
            continue;
        }
        let first = line.lead.start;
        if toks[first].kind == Kind::Newline {
            toks[first].spaces = 0;
            continue;
        }
        let mut net = balance(&toks[line.lead.clone()]);
        if let Some(a) = &line.assign {
            net += balance(&toks[a.clone()]);
        }
        if net > 0 {
            toks[first].spaces = 2 * open.len();
            open.push(net);
            continue;
        }
        let mut closed = -net;
        while closed > 0 {
            let Some(top) = open.last_mut() else { break };
            if closed >= *top {
                closed -= *top;
                open.pop();
            } else {
                *top -= closed;
                closed = 0;
            }
        }
        toks[first].spaces = 2 * open.len();
    }
}

fn space(toks: &mut [Token], lines: &[Line]) {
    for line in lines {
        space_cell(toks, line.lead.clone());
        if let Some(a) = &line.assign {
            toks[a.start].spaces = 1;
            space_cell(toks, a.clone());
        }
    }
}

fn space_cell(toks: &mut [Token], cell: std::ops::Range<usize>) {
    for i in cell.clone() {
        if i + 1 >= cell.end {
            break;
        }
        let before = if i > cell.start {
            Some(toks[i - 1].kind)
        } else {
            None
        };
        let gap = space_after(&toks[i], before, &toks[i + 1]);
        toks[i + 1].spaces = usize::from(gap);
    }
}

/// Whether one space separates `t` from the token `after` it (`before`
/// is the token before `t` in the same cell).
fn space_after(t: &Token, before: Option<Kind>, after: &Token) -> bool {
    use Kind::*;
    let (k, a) = (t.kind, after.kind);
    if a == Newline {
        return false;
    }
    if (k == Ident && a == OParen)
        || matches!(k, Dot | DoubleColon)
        || matches!(a, Dot | DoubleColon | Comma | Ellipsis)
    {
        return false;
    }
    if k == Comma {
        return true;
    }
    if matches!(k, QuotedLit | StringLit | OQuote | OHeredoc)
        || matches!(a, QuotedLit | StringLit | CQuote | CHeredoc)
    {
        // Inside templates nothing is added.
        return false;
    }
    if k == Ident && t.text == "in" && before == Some(Ident) {
        // `for x in [a]`: `in` is a keyword here, not a value being indexed.
        return true;
    }
    if a == OBrack && (k == Ident || k == Number || t.nesting() < 0) {
        return false;
    }
    if k == Bang {
        return false;
    }
    if k == Minus {
        // A minus after something that cannot end an operand is a negation.
        return !matches!(
            before,
            None | Some(
                OParen
                    | OBrace
                    | OBrack
                    | Equal
                    | Colon
                    | Comma
                    | Question
                    | Plus
                    | Star
                    | Slash
                    | Percent
                    | Minus
                    | EqualOp
                    | NotEqual
                    | Greater
                    | GreaterEq
                    | Less
                    | LessEq
                    | And
                    | Or
                    | Bang
            )
        );
    }
    if k == OBrace || a == CBrace {
        // Braces are padded (`{ a = 1 }`), except an empty pair.
        return !(k == OBrace && a == CBrace);
    }
    if matches!(k, TemplateInterp | TemplateControl) && a == OBrace {
        return true;
    }
    if k == CBrace && a == TemplateSeqEnd {
        return true;
    }
    if k == TemplateSeqEnd && matches!(a, TemplateInterp | TemplateControl) {
        return false;
    }
    if t.nesting() > 0 || after.nesting() < 0 {
        return false;
    }
    true
}

/// Width of a run of tokens as written: blanks plus characters.
fn columns(toks: &[Token]) -> usize {
    toks.iter().map(|t| t.spaces + t.text.chars().count()).sum()
}

fn align(toks: &mut [Token], lines: &[Line]) {
    // `=` of consecutive lines with an assignment cell.
    let mut i = 0;
    while i < lines.len() {
        if lines[i].assign.is_none() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len() && lines[j].assign.is_some() {
            j += 1;
        }
        let width = lines[i..j]
            .iter()
            .map(|l| columns(&toks[l.lead.clone()]))
            .max()
            .unwrap_or(0);
        for l in &lines[i..j] {
            let w = columns(&toks[l.lead.clone()]);
            if let Some(a) = &l.assign {
                toks[a.start].spaces = width - w + 1;
            }
        }
        i = j;
    }
    // Comments ending consecutive lines.
    let width_before = |toks: &[Token], l: &Line| {
        columns(&toks[l.lead.clone()]) + l.assign.clone().map(|a| columns(&toks[a])).unwrap_or(0)
    };
    let mut i = 0;
    while i < lines.len() {
        if lines[i].comment.is_none() {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < lines.len() && lines[j].comment.is_some() {
            j += 1;
        }
        let width = lines[i..j]
            .iter()
            .map(|l| width_before(toks, l))
            .max()
            .unwrap_or(0);
        for l in &lines[i..j] {
            let w = width_before(toks, l);
            if let Some(c) = l.comment {
                toks[c].spaces = width - w + 1;
            }
        }
        i = j;
    }
}
