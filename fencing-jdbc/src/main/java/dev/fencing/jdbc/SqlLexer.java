package dev.fencing.jdbc;

/**
 * Lexes SQL text as PostgreSQL lexes it, one token at a time: comments (line comments and nested
 * block comments) are skipped, and string literals ({@code '...'}, {@code E'...'}, {@code
 * $tag$...$tag$}) and quoted identifiers are one token each, so that nothing inside them counts.
 * Text that does not lex (an unterminated literal, quoted identifier or comment) is {@link
 * #malformed()}.
 */
final class SqlLexer {
  // The kinds of token next() returns; END and SEMICOLON end a statement and are never kept.
  static final int END = -1;
  static final int SEMICOLON = -2;
  static final int WORD = 0;
  static final int QUOTED_IDENTIFIER = 1;
  static final int LEFT_PAREN = 2;
  static final int RIGHT_PAREN = 3;
  static final int COMMA = 4;
  static final int DOT = 5;
  static final int DOUBLE_COLON = 6;
  static final int NUMBER = 7;
  static final int LITERAL = 8;
  static final int OTHER = 9;

  private final String sql;
  private final int length;
  private final boolean backslashEscapes;
  private int pos;
  private int tokenStart;
  private boolean malformed;
  private boolean sawBackslashInPlainLiteral;

  /**
   * @param backslashEscapes whether a backslash escapes the next character in a plain literal
   *     {@code '...'}, as with {@code standard_conforming_strings} off
   */
  SqlLexer(String sql, boolean backslashEscapes) {
    this.sql = sql;
    this.length = sql.length();
    this.backslashEscapes = backslashEscapes;
  }

  /** Where the token {@link #next()} returned starts. */
  int tokenStart() {
    return tokenStart;
  }

  /** Where the token {@link #next()} returned ends (exclusive). */
  int tokenEnd() {
    return pos;
  }

  /** Whether a literal, quoted identifier or comment was left unterminated. */
  boolean malformed() {
    return malformed;
  }

  /**
   * Whether a plain literal {@code '...'} held a backslash, whose meaning depends on {@code
   * standard_conforming_strings}.
   */
  boolean sawBackslashInPlainLiteral() {
    return sawBackslashInPlainLiteral;
  }

  /** Lexes the next token, leaving it at [{@link #tokenStart()}, {@link #tokenEnd()}): its kind. */
  int next() {
    skipSpaceAndComments();
    tokenStart = pos;
    if (pos >= length) {
      return END;
    }
    char c = sql.charAt(pos);
    if (isIdentifierStart(c)) {
      pos++;
      while (pos < length && isIdentifierPart(sql.charAt(pos))) {
        pos++;
      }
      if (pos == tokenStart + 1 && (c == 'e' || c == 'E') && pos < length && peek(0) == '\'') {
        skipQuoted('\'', true, false);
        return LITERAL;
      }
      return WORD;
    }
    if (isDigit(c)) {
      skipNumber();
      return NUMBER;
    }
    switch (c) {
      case '\'':
        skipQuoted('\'', backslashEscapes, true);
        return LITERAL;
      case '"':
        skipQuoted('"', false, false);
        return QUOTED_IDENTIFIER;
      case '$':
        return dollar();
      case ';':
        pos++;
        return SEMICOLON;
      case '(':
        pos++;
        return LEFT_PAREN;
      case ')':
        pos++;
        return RIGHT_PAREN;
      case ',':
        pos++;
        return COMMA;
      case '.':
        pos++;
        return DOT;
      case ':':
        if (pos + 1 < length && peek(1) == ':') {
          pos += 2;
          return DOUBLE_COLON;
        }
        pos++;
        return OTHER;
      default:
        pos++;
        return OTHER;
    }
  }

  private char peek(int ahead) {
    return sql.charAt(pos + ahead);
  }

  private void skipSpaceAndComments() {
    while (pos < length) {
      char c = sql.charAt(pos);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\u000B') {
        pos++;
      } else if (c == '-' && pos + 1 < length && peek(1) == '-') {
        pos += 2;
        while (pos < length && sql.charAt(pos) != '\n' && sql.charAt(pos) != '\r') {
          pos++;
        }
      } else if (c == '/' && pos + 1 < length && peek(1) == '*') {
        skipBlockComment();
      } else {
        return;
      }
    }
  }

  private void skipBlockComment() {
    pos += 2;
    int depth = 1;
    while (pos < length) {
      char c = sql.charAt(pos);
      if (c == '/' && pos + 1 < length && peek(1) == '*') {
        depth++;
        pos += 2;
      } else if (c == '*' && pos + 1 < length && peek(1) == '/') {
        pos += 2;
        if (--depth == 0) {
          return;
        }
      } else {
        pos++;
      }
    }
    malformed = true;
  }

  /** Skips a literal or quoted identifier opening at pos; a doubled quote stands for itself. */
  private void skipQuoted(char quote, boolean escapes, boolean plainLiteral) {
    pos++;
    while (pos < length) {
      char c = sql.charAt(pos);
      if (c == '\\' && plainLiteral) {
        sawBackslashInPlainLiteral = true;
      }
      if (c == '\\' && escapes) {
        pos += 2;
      } else if (c != quote) {
        pos++;
      } else if (pos + 1 < length && peek(1) == quote) {
        pos += 2;
      } else {
        pos++;
        return;
      }
    }
    pos = length;
    malformed = true;
  }

  /** A parameter ($1), a dollar-quoted string ($$...$$, $tag$...$tag$), or a lone $. */
  private int dollar() {
    int t = pos + 1;
    if (t < length && isDigit(sql.charAt(t))) {
      while (t < length && isDigit(sql.charAt(t))) {
        t++;
      }
      pos = t;
      return NUMBER;
    }
    if (t < length && sql.charAt(t) != '$') {
      if (!isIdentifierStart(sql.charAt(t))) {
        pos++;
        return OTHER;
      }
      while (t < length && sql.charAt(t) != '$' && isIdentifierPart(sql.charAt(t))) {
        t++;
      }
    }
    if (t >= length || sql.charAt(t) != '$') {
      pos++;
      return OTHER;
    }
    String tag = sql.substring(pos, t + 1);
    int close = sql.indexOf(tag, t + 1);
    if (close < 0) {
      pos = length;
      malformed = true;
    } else {
      pos = close + tag.length();
    }
    return LITERAL;
  }

  /** Digits, a fraction and an exponent; letters right after are a separate word. */
  private void skipNumber() {
    while (pos < length && (isDigit(sql.charAt(pos)) || sql.charAt(pos) == '.')) {
      pos++;
    }
    if (pos < length && (sql.charAt(pos) == 'e' || sql.charAt(pos) == 'E')) {
      int t = pos + 1;
      if (t < length && (sql.charAt(t) == '+' || sql.charAt(t) == '-')) {
        t++;
      }
      if (t < length && isDigit(sql.charAt(t))) {
        pos = t;
        while (pos < length && isDigit(sql.charAt(pos))) {
          pos++;
        }
      }
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  // As PostgreSQL's lexer: any non-ASCII character may be part of a name.
  private static boolean isIdentifierStart(char c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80;
  }

  private static boolean isIdentifierPart(char c) {
    return isIdentifierStart(c) || isDigit(c) || c == '$';
  }
}
