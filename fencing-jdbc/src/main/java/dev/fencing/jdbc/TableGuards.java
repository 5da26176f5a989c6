package dev.fencing.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import org.jspecify.annotations.Nullable;

/**
 * The declarations of {@link FencedTables} for one {@link FencedDataSource}, and the rule a
 * statement writing such a table meets.
 */
final class TableGuards {
  /** A declared table: its resource, or null when its rows name their own. */
  record Guard(String table, @Nullable String resource, String key) {
    /** {@code key}: the table's {@link #matchKey}, found once per text, not per execution. */
    Guard(String table, @Nullable String resource) {
      this(table, resource, matchKey(table));
    }
  }

  /**
   * The tables declared under one match key: the first name declared, its resources, and each name
   * declared with per-row resources (names differing in a non-ASCII letter's case share a key, and
   * each is asked whether it is protected).
   */
  private record Declared(String table, Set<String> resources, Set<String> perRowTables) {}

  /**
   * A text's guards: {@code closed} counts each {@code EXECUTE name} as every declared table (what
   * {@link #targets(String)} answers without a connection), {@code own} counts it as nothing, and
   * {@code prepared} names the statements it executes, asked per execution.
   */
  private record Targets(List<Guard> closed, List<Guard> own, List<String> prepared) {}

  // matchKey(table) -> the tables and their resources; several when entities share a table
  private final Map<String, Declared> guards = new ConcurrentHashMap<>();
  private static final ThreadLocal<Map<String, Integer>> ANNOUNCED =
      ThreadLocal.withInitial(HashMap::new);

  // The tables a text writes depend on the text alone: found once per text, not per execution.
  // Bounded by the characters of all texts (as many as MEMO_ENTRIES texts of MEMO_TEXT_LENGTH),
  // not each one's: a long native query an application repeats is not lexed at every execution.
  private static final int MEMO_CHARACTERS =
      SqlClassifier.MEMO_ENTRIES * SqlClassifier.MEMO_TEXT_LENGTH;
  private static final TextMemo<List<String>> WRITTEN =
      TextMemo.boundedByCharacters(
          TableGuards::writtenTables, SqlClassifier.MEMO_ENTRIES, MEMO_CHARACTERS);

  // The guards of each text under the current declarations (issue 13: Hibernate prepares a new
  // statement for every execution, so this is asked once per execution of every statement). A
  // declaration replaces the memo, so that an answer never predates a declaration it should see.
  private volatile TextMemo<Targets> targets = newTargets();

  TableGuards() {}

  private TextMemo<Targets> newTargets() {
    return TextMemo.boundedByCharacters(
        this::lookUpTargets, SqlClassifier.MEMO_ENTRIES, MEMO_CHARACTERS);
  }

  /**
   * The tables {@code sql} names as the target of a write ({@link WriteTargets}), normalised (no
   * schema or quotes), in order: what {@link #targets} looks up among the declared ones.
   */
  static List<String> writtenTables(String sql) {
    return List.copyOf(WriteTargets.find(sql));
  }

  synchronized void declare(String table, @Nullable String resource) {
    String key = normalise(Objects.requireNonNull(table, "table"));
    if (key.isEmpty() || key.indexOf('\u0000') >= 0) {
      throw new IllegalArgumentException("table must be a table name, was '" + table + "'");
    }
    Declared declared =
        guards.computeIfAbsent(
            matchKey(key),
            k -> new Declared(key, new CopyOnWriteArraySet<>(), new CopyOnWriteArraySet<>()));
    if (resource == null) {
      declared.perRowTables().add(key);
    } else {
      declared.resources().add(resource);
    }
    targets = newTargets(); // after the declaration: a lookup in the new memo sees it
  }

  // An entity write announces its table by the name Hibernate gives: normalised once per name.
  private static final TextMemo<String> NORMALISED =
      new TextMemo<>(
          name -> matchKey(normalise(name)),
          SqlClassifier.MEMO_ENTRIES,
          SqlClassifier.MEMO_TEXT_LENGTH);

  static void announce(String table) {
    ANNOUNCED.get().merge(NORMALISED.get(table), 1, TableGuards::saturatedSum);
  }

  /**
   * Announces every statement writing {@code table} on this thread until {@link #withdraw}: a
   * collection's writes, as many as its changed rows.
   */
  static void announceUntilWithdrawn(String table) {
    ANNOUNCED.get().put(NORMALISED.get(table), Integer.MAX_VALUE);
  }

  private static Integer saturatedSum(Integer a, Integer b) {
    return a > Integer.MAX_VALUE - b ? Integer.MAX_VALUE : a + b;
  }

  /** Forgets what this thread announced for {@code table} and no statement used up. */
  static void withdraw(String table) {
    Map<String, Integer> announced = ANNOUNCED.get();
    if (!announced.isEmpty()) {
      announced.remove(NORMALISED.get(table));
    }
  }

  /** Forgets the announcements of the writing thread (its transaction ended). */
  void forgetAnnouncements() {
    if (!guards.isEmpty()) {
      ANNOUNCED.get().clear();
    }
  }

  /**
   * The declared tables {@code sql} writes; empty (and cheap) when none is declared. What {@link
   * #lookUp} returns, kept per text until the next declaration: without the connection, the
   * statement an {@code EXECUTE name} runs is unknown, and it writes every declared table.
   */
  List<Guard> targets(String sql) {
    if (guards.isEmpty()) {
      return List.of();
    }
    return targets.get(sql).closed();
  }

  /**
   * The declared tables {@code sql} writes when it runs on {@code raw}: as {@link
   * #targets(String)}, but an {@code EXECUTE name} writes what the statement {@code raw} prepared
   * under that name writes, its text asked of the server ({@link PreparedExecutions}; a round trip
   * for such a text only); every declared table if there is none, or if that text is itself one to
   * ask about.
   */
  List<Guard> targets(Connection raw, String sql) throws SQLException {
    if (guards.isEmpty()) {
      return List.of();
    }
    Targets found = targets.get(sql);
    if (found.prepared().isEmpty()) {
      return found.own();
    }
    List<Guard> all = new ArrayList<>(found.own());
    for (String name : found.prepared()) {
      String statement = PreparedExecutions.statement(raw, name);
      Targets executed = statement == null ? null : targets.get(statement);
      if (executed == null || !executed.prepared().isEmpty()) {
        addEveryDeclared(all);
      } else {
        all.addAll(executed.own());
      }
    }
    return List.copyOf(all);
  }

  /**
   * The declared tables {@code sql} writes, looked up in the declarations now (immutable); an
   * {@code EXECUTE name} writes every one. For tests only: the uncached answer they hold {@link
   * #targets(String)}'s memoised one to.
   */
  List<Guard> lookUp(String sql) {
    return lookUpTargets(sql).closed();
  }

  private Targets lookUpTargets(String sql) {
    List<Guard> found = null;
    List<String> prepared = List.of();
    for (String key : WRITTEN.get(sql)) {
      String name = PreparedExecutions.name(key);
      if (name != null) {
        if (prepared.isEmpty()) {
          prepared = new ArrayList<>(1);
        }
        prepared.add(name);
        continue;
      }
      if (key.equals(WriteTargets.UNREAD)) {
        if (found == null) {
          found = new ArrayList<>(guards.size());
        }
        addEveryDeclared(found);
        continue;
      }
      Declared declared = guards.get(matchKey(key));
      if (declared != null) {
        if (found == null) {
          found = new ArrayList<>(2);
        }
        addGuards(found, declared);
      }
    }
    List<Guard> own = found == null ? List.of() : List.copyOf(found);
    if (prepared.isEmpty()) {
      return new Targets(own, own, List.of());
    }
    List<Guard> closed = new ArrayList<>(own);
    addEveryDeclared(closed);
    return new Targets(List.copyOf(closed), own, List.copyOf(prepared));
  }

  private void addEveryDeclared(List<Guard> found) {
    for (Declared declared : guards.values()) {
      addGuards(found, declared);
    }
  }

  private static void addGuards(List<Guard> found, Declared declared) {
    for (String r : declared.resources()) {
      found.add(new Guard(declared.table(), r));
    }
    for (String table : declared.perRowTables()) {
      found.add(new Guard(table, null));
    }
  }

  /**
   * Whether one write of {@code guards}' per-row tables was announced on this thread (consumed);
   * true when none of them has per-row resources.
   */
  static boolean announced(List<Guard> guards) {
    boolean all = true;
    Map<String, Integer> announced = ANNOUNCED.get();
    for (int i = 0; i < guards.size(); i++) { // per execution: no iterator
      Guard g = guards.get(i);
      if (g.resource() == null) {
        String key = g.key();
        Integer n = announced.get(key);
        if (n == null) {
          all = false;
        } else if (n == 1) {
          announced.remove(key);
        } else if (n != Integer.MAX_VALUE) { // MAX_VALUE: until withdrawn
          announced.put(key, n - 1);
        }
      }
    }
    return all;
  }

  /**
   * Refuses (returns the exception to throw) a write of {@code guards} without the token its table
   * needs, or an unannounced write of a per-row table that is not protected; null if it may run.
   */
  static @Nullable FencingRefusedException refusal(
      Connection raw, List<Guard> guards, FencingContext context, boolean unannounced)
      throws SQLException {
    for (Guard g : guards) {
      String resource = g.resource();
      if (resource != null) {
        if (context.token(resource).isEmpty()) {
          return new MissingFencingTokenException(
              "a write to table "
                  + g.table()
                  + " needs a fencing token for resource \""
                  + resource
                  + "\", and none is bound on thread "
                  + Thread.currentThread().getName(),
              FencingSqlState.MISSING_TOKEN.code(),
              resource,
              null,
              null,
              null);
        }
      } else if (unannounced && !isProtected(raw, g.table())) {
        return new MissingFencingTokenException(
            "a bulk or native write to table "
                + g.table()
                + ", whose rows name their own fencing resources, is refused: the client cannot"
                + " judge every row it writes. Protect the table (fencing.protect_rows) to let"
                + " the database judge each row, or write the entities one by one",
            FencingSqlState.MISSING_TOKEN.code(),
            "?",
            null,
            null,
            null);
      }
    }
    return null;
  }

  private static final String PROTECTED =
      "SELECT pg_catalog.bool_and(EXISTS (SELECT FROM pg_catalog.pg_trigger t"
          + " WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid"
          + " AND t.tgname OPERATOR(pg_catalog.=) 'fencing_protect'::pg_catalog.name"
          + " AND t.tgenabled OPERATOR(pg_catalog.<>) 'D'::pg_catalog.\"char\"))"
          + " FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.=) ?::pg_catalog.name"
          + " AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p,v,f}'::pg_catalog.\"char\"[])"
          + " AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)";

  /**
   * Whether every table, view or foreign table named {@code table} that this session can write has
   * an enabled {@code fencing_protect} trigger (and there is one). The statement's schema is not
   * known here ({@link WriteTargets} names tables without one) and the session's search_path is not
   * the statement's: a qualified {@code other.t}, a temporary {@code t} a previous borrower of a
   * pooled connection left behind, or a schema put first on the path would each make a lookup
   * through the path answer for another table. So every namesake must be protected, other sessions'
   * temporary tables aside; and every function and operator is pg_catalog's, named, so nothing on
   * the path answers for them.
   *
   * <p>{@code table}: the name as stored (folded or quoted already), so compared as it is, not
   * folded again: "Rows_Q" is not rows_q.
   */
  private static boolean isProtected(Connection raw, String table) throws SQLException {
    try (PreparedStatement ps = raw.prepareStatement(PROTECTED)) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * The table's name without schema and quotes; unless it was quoted, its ASCII letters in lower
   * case, as {@link WriteTargets} reads an unquoted name (and a UTF-8 database folds it).
   */
  private static String normalise(String name) {
    String n = name.trim();
    if (n.length() >= 2 && n.endsWith("\"")) {
      return n.substring(n.lastIndexOf('"', n.length() - 2) + 1, n.length() - 1);
    }
    return WriteTargets.asciiLowerCase(n.substring(n.lastIndexOf('.') + 1).trim());
  }

  // NAMEDATALEN - 1: the bytes of a name the server keeps
  private static final int NAME_BYTES = 63;

  /**
   * {@code name}'s longest prefix of at most {@link #NAME_BYTES} bytes in UTF-8, whole characters.
   */
  static String truncated(String name) {
    if (name.length() * 3 <= NAME_BYTES) {
      return name; // even every char at 3 bytes (a surrogate pair is 4 bytes for 2 chars) fits
    }
    int bytes = 0;
    for (int i = 0; i < name.length(); ) {
      int c = name.codePointAt(i);
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      if (bytes > NAME_BYTES) {
        return name.substring(0, i);
      }
      i += Character.charCount(c);
    }
    return name;
  }

  /**
   * What a declared table and a written one are matched by: {@code name} with its non-ASCII letters
   * in lower case ({@code name} itself if it has none in upper case). PostgreSQL folds an unquoted
   * name's ASCII letters only, and its other letters with the locale's {@code tolower()} in a
   * single-byte database but not at all in a UTF-8 one ({@code ÄCCOUNT} is {@code "Äccount"} or
   * {@code "äccount"}): matching them case-insensitively never misses a declared table under either
   * folding (a quoted {@code "Äccount"} and {@code "äccount"} match too: a false refusal at worst).
   * The server truncates a name to {@value #NAME_BYTES} bytes (in UTF-8, at a character's end): so
   * are both, so that a longer name matches the table it stands for.
   */
  static String matchKey(String name) {
    name = truncated(name);
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c >= 0x80 && Character.toLowerCase(c) != c) {
        char[] chars = name.toCharArray();
        for (int k = i; k < chars.length; k++) {
          if (chars[k] >= 0x80) {
            chars[k] = Character.toLowerCase(chars[k]);
          }
        }
        return new String(chars);
      }
    }
    return name;
  }
}
