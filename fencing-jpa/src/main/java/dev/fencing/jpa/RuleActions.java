package dev.fencing.jpa;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The relations a rule's actions write, read from its query trees ({@code pg_rewrite.ev_action},
 * the server's node-tree form, not SQL text): for each query anywhere in them (an action, a
 * subquery, a {@code WITH} query), its result relation ({@code resultRelation}, an index into its
 * own range table, whose entry must be a relation's: {@code rtekind 0}, {@code relid}). A query
 * that has none writes nothing: a {@code SELECT}, {@code NOTHING}, or a {@code NOTIFY} (the only
 * utility statement a rule action may be). Anything else, or a tree this reader does not make out
 * exactly, answers {@code null}: the caller then takes every relation the rule names as written.
 *
 * <p>The form is read as the server's own reader ({@code pg_strtok}) splits it: {@code ( ) { }} are
 * tokens of their own, a backslash escapes the next character, a string value is a token whose
 * special characters are escaped. A string is never escaped for starting with {@code :}, so a name
 * (an alias, a column) could read as a field name: a node in which a field name occurs twice makes
 * the whole tree unreadable. The fields read here are in nodes that hold no string of their own
 * ({@code QUERY}, and {@code RANGETBLENTRY} of a relation).
 */
final class RuleActions {
  /** {@code CMD_SELECT}, and {@code CMD_NOTHING} (6 before PostgreSQL 15, 7 since). */
  private static final Set<String> READ_ONLY = Set.of("1", "6", "7");

  private final String text;
  private int at;

  private RuleActions(String text) {
    this.text = text;
  }

  /** A node: its type and its fields, each a list of items (node, list, or atom). */
  private record Node(String type, Map<String, List<Object>> fields) {}

  /** Thrown where the tree is not what this reader makes out exactly. */
  private static final class Unreadable extends Exception {
    private static final long serialVersionUID = 1L;

    Unreadable(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * The oids of the relations {@code evAction} writes; {@code null} if it cannot tell (the caller
   * must then assume every relation the rule names is written).
   */
  static @Nullable Set<Long> written(@Nullable String evAction) {
    if (evAction == null) {
      return null;
    }
    try {
      RuleActions reader = new RuleActions(evAction);
      Object tree = reader.item(reader.token());
      if (reader.token() != null) {
        throw new Unreadable("text after the tree");
      }
      if (!(tree instanceof List<?> actions)) {
        throw new Unreadable("not a list of queries");
      }
      Set<Long> written = new HashSet<>();
      for (Object action : actions) {
        if (!(action instanceof Node node) || !node.type().equals("QUERY")) {
          throw new Unreadable("an action that is not a query");
        }
      }
      collect(tree, written);
      return written;
    } catch (Unreadable | RuntimeException | StackOverflowError e) {
      return null; // fail closed: every relation the rule names counts as written
    }
  }

  /** Adds what every query in {@code item} writes. */
  private static void collect(Object item, Set<Long> written) throws Unreadable {
    if (item instanceof List<?> list) {
      for (Object element : list) {
        collect(element, written);
      }
    } else if (item instanceof Node node) {
      if (node.type().equals("QUERY")) {
        query(node, written);
      }
      for (List<Object> value : node.fields().values()) {
        collect(value, written);
      }
    }
  }

  private static void query(Node query, Set<Long> written) throws Unreadable {
    String command = atom(query, "commandType");
    int result = Integer.parseInt(atom(query, "resultRelation"));
    Object utility = one(query, "utilityStmt");
    if (result > 0) {
      if (!(one(query, "rtable") instanceof List<?> rtable) || rtable.size() < result) {
        throw new Unreadable("a result relation outside the range table");
      }
      if (!(rtable.get(result - 1) instanceof Node entry)
          || !entry.type().equals("RANGETBLENTRY")
          || !atom(entry, "rtekind").equals("0")) {
        throw new Unreadable("a result relation that is not a relation's entry");
      }
      written.add(Long.parseLong(atom(entry, "relid")));
    } else if (utility != null) {
      if (!(utility instanceof Node statement) || !statement.type().equals("NOTIFYSTMT")) {
        throw new Unreadable("a utility statement other than NOTIFY");
      }
    } else if (!READ_ONLY.contains(command)) {
      throw new Unreadable("command " + command + " with no result relation");
    }
  }

  /** The one item of {@code field} of {@code node}; null for {@code <>}. */
  private static @Nullable Object one(Node node, String field) throws Unreadable {
    List<Object> value = node.fields().get(field);
    if (value == null || value.size() != 1) {
      throw new Unreadable("field " + field + " of " + node.type());
    }
    Object item = value.get(0);
    return "<>".equals(item) ? null : item;
  }

  private static String atom(Node node, String field) throws Unreadable {
    if (!(one(node, field) instanceof String atom)) {
      throw new Unreadable("field " + field + " of " + node.type() + " is not a value");
    }
    return atom;
  }

  /** The item that starts with {@code token}. */
  private Object item(@Nullable String token) throws Unreadable {
    if (token == null) {
      throw new Unreadable("the tree ends early");
    }
    return switch (token) {
      case "{" -> node();
      case "(" -> list();
      case ")", "}" -> throw new Unreadable("an unbalanced " + token);
      default -> token;
    };
  }

  private Node node() throws Unreadable {
    String type = token();
    if (type == null || (type.length() == 1 && "(){}".contains(type)) || type.startsWith(":")) {
      throw new Unreadable("a node without a type");
    }
    Map<String, List<Object>> fields = new HashMap<>();
    List<Object> value = null;
    for (String token = token(); ; token = token()) {
      if ("}".equals(token)) {
        return new Node(type, fields);
      }
      if (token != null && token.startsWith(":")) {
        value = new ArrayList<>();
        if (fields.put(token.substring(1), value) != null) {
          throw new Unreadable("field " + token + " twice in " + type);
        }
      } else if (value == null) {
        throw new Unreadable("a value before the first field of " + type);
      } else {
        value.add(item(token));
      }
    }
  }

  private List<Object> list() throws Unreadable {
    List<Object> items = new ArrayList<>();
    for (String token = token(); !")".equals(token); token = token()) {
      items.add(item(token));
    }
    return items;
  }

  /** The next token as {@code pg_strtok} splits it (escapes kept); null at the end. */
  private @Nullable String token() {
    while (at < text.length() && " \n\t".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
    if (at >= text.length()) {
      return null;
    }
    int start = at;
    if ("(){}".indexOf(text.charAt(at)) >= 0) {
      at++;
    } else {
      while (at < text.length() && " \n\t(){}".indexOf(text.charAt(at)) < 0) {
        at += text.charAt(at) == '\\' && at + 1 < text.length() ? 2 : 1;
      }
    }
    return text.substring(start, at);
  }
}
