package dev.fencing.jdbc;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The forms a prepared statement's carried check takes (issues 13 and 14), and what one {@link
 * FencedDataSource} learned to choose between them. For one token the common form calls no function
 * ({@link Kind#FAST}, V30):
 *
 * <pre>
 * SELECT pg_catalog.pg_advisory_xact_lock_shared(&lt;key space&gt;, pg_catalog.hashtext(?));
 * SELECT coalesce((SELECT -1 FROM &lt;schema&gt;.check_at_token c WHERE c.name = ? AND c.max_seen = ?
 *                   AND c.lock_space = &lt;key space&gt;), &lt;schema&gt;.check_one(?, ?))
 * (each = written OPERATOR(pg_catalog.=))
 * </pre>
 *
 * The view holds the fast path's condition (V30); a row it does not show, or in another key space
 * than the one locked, sends the check to {@code check_one}, which decides as before. The key space
 * is only what this data source believes: it is read from {@code resource.lock_space}'s default by
 * the first check ({@link Kind#LEARN}: {@code check_one} and that default in one statement), and
 * read again after any check the fast form did not accept. A wrong one costs a call of {@code
 * check_one}, never safety.
 *
 * <p>A resource whose fast form fell through to {@code check_one} (protected, strict, external, a
 * transaction not READ COMMITTED, a token not current) is checked by {@code check_one} alone for
 * its next {@value #SLOW_CHECKS} checks, where the two statements in front of it would cost more.
 */
final class CheckForms {
  /** What a form sends, and how its arguments are bound and its row read. */
  enum Kind {
    /** {@code check_tokens(?, ?)}: two arrays. */
    MANY,
    /** {@code check_one(?, ?)}: the resource and its token. */
    ONE,
    /** {@code check_one(?, ?)} and the key space in a second column. */
    LEARN,
    /** The lock, then the read through {@code check_at_token}, {@code check_one} if it fails. */
    FAST
  }

  /** A form of the check: its kind and text. */
  record Form(Kind kind, String sql) {
    /** The check's statements in the text: two for {@link Kind#FAST}, else one. */
    int statements() {
      return kind == Kind.FAST ? 2 : 1;
    }

    /** The check's parameters: the caller's come after them. */
    int parameters() {
      return kind == Kind.FAST ? 5 : 2;
    }
  }

  /** How many checks of a resource use {@code check_one} alone after the fast form fell through. */
  static final int SLOW_CHECKS = 64;

  // bound on the resources remembered as slow (cleared when reached: a memory bound, not a rule)
  private static final int SLOW_RESOURCES = 4096;

  private final String schema;
  private final Form many;
  private final Form one;
  private final Form learn;
  private volatile @Nullable Form fast;
  private volatile boolean relearn = true;
  private final ConcurrentHashMap<String, AtomicInteger> slow = new ConcurrentHashMap<>();

  CheckForms(String schema) {
    this.schema = schema;
    this.many = new Form(Kind.MANY, "SELECT " + schema + ".check_tokens(?, ?)");
    this.one = new Form(Kind.ONE, "SELECT " + schema + ".check_one(?, ?)");
    // resource.lock_space's default, as set_advisory_key_space writes it (V28): 5 or '-5'::integer
    this.learn =
        new Form(
            Kind.LEARN,
            "SELECT "
                + schema
                + ".check_one(?, ?), (SELECT pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin,"
                + " d.adrelid), '^''?(-?[0-9]+)')::integer FROM pg_catalog.pg_attrdef d"
                + " JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum"
                + " WHERE d.adrelid = '"
                + schema
                + ".resource'::pg_catalog.regclass AND a.attname = 'lock_space')");
  }

  /**
   * The fast form's text with {@code space} as its key space. Its comparisons are pg_catalog's
   * whatever the session's search_path: an {@code =} of another schema (an exact match for {@code
   * text = varchar}, or any {@code =} of a schema the path lists before pg_catalog) would decide
   * what the view accepts.
   */
  static String fastSql(String schema, int space) {
    return "SELECT pg_catalog.pg_advisory_xact_lock_shared("
        + space
        + ", pg_catalog.hashtext(?));SELECT coalesce((SELECT -1 FROM "
        + schema
        + ".check_at_token c WHERE c.name OPERATOR(pg_catalog.=) ?"
        + " AND c.max_seen OPERATOR(pg_catalog.=) ? AND c.lock_space OPERATOR(pg_catalog.=) "
        + space
        + "), "
        + schema
        + ".check_one(?, ?))";
  }

  /** The form to carry for {@code bindings} now. */
  Form form(List<FencingContext.Binding> bindings) {
    if (bindings.size() != 1) {
      return many;
    }
    Form f = fast;
    if (f == null || relearn) {
      return learn;
    }
    String resource = bindings.get(0).token().resource();
    AtomicInteger left = slow.get(resource);
    if (left != null) {
      if (left.getAndDecrement() > 0) {
        return one;
      }
      // spent: the fast form again, and no counter left to decrement (it would wrap after 2^31
      // checks and send check_one alone again)
      slow.remove(resource, left);
    }
    return f;
  }

  /** How many resources are remembered as slow (their counters not yet spent). */
  int slowResources() {
    return slow.size();
  }

  /** Every text a check of {@code tokens} tokens may be carried with now. */
  List<String> texts(int tokens) {
    if (tokens != 1) {
      return List.of(many.sql());
    }
    Form f = fast;
    return f == null ? List.of(learn.sql(), one.sql()) : List.of(f.sql(), learn.sql(), one.sql());
  }

  /**
   * What the check of {@code resource} in {@code form} returned ({@code value}; {@code space} the
   * key space a {@link Kind#LEARN} form read): the number of resources it advanced.
   */
  int returned(Form form, String resource, int value, @Nullable Integer space) {
    switch (form.kind()) {
      case LEARN -> {
        if (space != null) {
          Form f = fast;
          if (f == null || !f.sql().equals(fastSql(schema, space))) {
            fast = new Form(Kind.FAST, fastSql(schema, space));
          }
          relearn = false;
        }
      }
      case FAST -> {
        if (value < 0) {
          return 0; // accepted by the view: nothing advanced
        }
        if (slow.size() >= SLOW_RESOURCES) {
          slow.clear();
        }
        slow.put(resource, new AtomicInteger(SLOW_CHECKS));
        relearn = true;
      }
      default -> {}
    }
    return value;
  }
}
