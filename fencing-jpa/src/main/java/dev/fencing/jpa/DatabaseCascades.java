package dev.fencing.jpa;

import dev.fencing.jdbc.FencedTables;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.hibernate.MappingException;
import org.hibernate.annotations.OnDeleteAction;
import org.hibernate.boot.Metadata;
import org.hibernate.mapping.Collection;
import org.hibernate.mapping.Column;
import org.hibernate.mapping.ForeignKey;
import org.hibernate.mapping.Join;
import org.hibernate.mapping.JoinedSubclass;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Table;
import org.hibernate.mapping.UnionSubclass;
import org.jspecify.annotations.Nullable;

/**
 * Refuses, when Hibernate starts, a foreign key of a fenced entity's table (or of a collection
 * table it owns) whose referential action writes that table ({@code ON DELETE CASCADE}, {@code SET
 * NULL}, {@code SET DEFAULT}, or the same {@code ON UPDATE} of the referenced key) when the row it
 * references may be deleted (or its key changed) without the tokens the fenced rows need.
 * PostgreSQL runs such an action itself, inside the write of the referenced row: no statement names
 * the fenced table, so neither an entity event nor the {@code FencedDataSource} sees that fenced
 * rows are deleted or changed (an unfenced parent's delete, with no token bound, deleted its fenced
 * children).
 *
 * <p>Two sources, one rule ({@link #check(Reference)}): the mapping ({@link #checkMapping}:
 * {@code @OnDelete}, an action in a key's {@code foreignKeyDefinition}; one in a column's {@code
 * columnDefinition} is refused whatever it references), read before Hibernate creates a schema, and
 * the keys the database has ({@link CascadeCatalog}, read from {@code pg_catalog} once any schema
 * management has run: the keys of the application's own migrations).
 *
 * <p>Allowed: the key that makes a row's own parts follow it (a {@code JOINED} subclass's table, a
 * secondary table, a collection table, on its own key to one of the owner's tables: the same row,
 * the same resource), and a key of a table with one resource per table to a table every write of
 * which needs all of that table's resources. A table is known by its name in every schema, as
 * {@link dev.fencing.jdbc.FencedTables} guards it; the referencing table of a key is never exempt
 * for not being mapped: a table no fenced entity maps is written with no token at all.
 */
final class DatabaseCascades {
  /** A referential action that writes the referencing rows, as a key's SQL may declare it. */
  private static final Pattern WRITING_ACTION =
      Pattern.compile(
          "\\bon\\s+(delete|update)\\s+(cascade|set\\s+null|set\\s+default)\\b",
          Pattern.CASE_INSENSITIVE);

  /**
   * A foreign key of a fenced table whose action writes it: {@code table}'s {@code columns} refer
   * to {@code referenced}'s {@code referencedColumns} (pairwise; empty for a rule), names as they
   * are shown; {@code action} says what and where declared.
   */
  record Reference(
      String table,
      List<String> columns,
      String referenced,
      List<String> referencedColumns,
      String action,
      boolean rule) {}

  /** What a write of a table needs: fixed resources, and whether its rows name their own. */
  private static final class Guard {
    final Set<String> resources = new TreeSet<>();
    boolean perRow;
    @Nullable String owner;
  }

  /**
   * A key of a row's own part: its columns, and the owner's tables it may refer to, each with its
   * primary key's columns, which the own columns refer to pairwise (the same row).
   */
  private record OwnKey(List<String> columns, Map<String, List<String>> owners) {}

  /** By {@link #key}: the tables the mapping fences, and their own parts' keys. */
  private final Map<String, Guard> guards = new HashMap<>();

  private final Map<String, List<OwnKey>> ownKeys = new HashMap<>();
  private final List<Table> tables = new ArrayList<>();

  private DatabaseCascades() {}

  /** The tables {@code fenced} entities (and the collections they own) write, from the mapping. */
  static DatabaseCascades of(Metadata metadata, Map<String, FencedEntity> fenced) {
    DatabaseCascades cascades = new DatabaseCascades();
    for (PersistentClass entity : metadata.getEntityBindings()) {
      FencedEntity fencing = fenced.get(entity.getEntityName());
      if (fencing == null) {
        continue;
      }
      Map<String, List<String>> owners = new HashMap<>();
      for (Table table : rowTables(entity)) {
        owners.put(key(table), primaryKey(table));
        cascades.guard(table, fencing);
      }
      for (Join join : entity.getJoinClosure()) {
        cascades.guard(join.getTable(), fencing);
        cascades.ownKey(join.getTable(), join.getKey().getColumns(), owners);
      }
      if (entity instanceof JoinedSubclass) {
        cascades.ownKey(entity.getTable(), entity.getKey().getColumns(), owners);
      }
    }
    for (Collection collection : metadata.getCollectionBindings()) {
      if (collection.isInverse() || collection.isOneToMany()) {
        continue; // its rows are another entity's, fenced (or not) by that entity
      }
      for (PersistentClass entity : metadata.getEntityBindings()) {
        FencedEntity fencing = fenced.get(entity.getEntityName());
        if (fencing != null && ownsOrInherits(entity, collection.getOwner())) {
          Map<String, List<String>> owners = new HashMap<>();
          for (Table table : rowTables(entity)) {
            owners.put(key(table), primaryKey(table));
          }
          Table table = collection.getCollectionTable();
          cascades.guard(table, fencing);
          cascades.ownKey(table, collection.getKey().getColumns(), owners);
        }
      }
    }
    return cascades;
  }

  /**
   * The tables holding {@code entity}'s rows, its secondary tables aside: its superclasses' too
   * ({@code JOINED}, {@code SINGLE_TABLE}), except for a {@code TABLE_PER_CLASS} subclass, whose
   * rows (every column) are in its own table alone: its superclass's table holds no row of it.
   */
  static List<Table> rowTables(PersistentClass entity) {
    return entity instanceof UnionSubclass ? List.of(entity.getTable()) : entity.getTableClosure();
  }

  /** The names of the fenced tables, as {@link #key} makes them. */
  Set<String> tableKeys() {
    return Set.copyOf(guards.keySet());
  }

  /**
   * Checks the keys the mapping declares, before Hibernate may create them.
   *
   * @throws MappingException naming the entity, table and key, if an action could write fenced rows
   *     without their tokens
   */
  void checkMapping() {
    for (Table table : tables) {
      for (Column column : table.getColumns()) {
        String action = written(column.getSqlType());
        if (action != null) {
          throw new MappingException(
              FencedEntity.invalid(
                      guards.get(key(table)).owner,
                      "the definition of column "
                          + column.getName()
                          + " of table "
                          + table.getName()
                          + " (columnDefinition) declares a reference "
                          + action
                          + ": PostgreSQL would write fenced rows of "
                          + table.getName()
                          + " when the referenced row is deleted (or its key changed), a write"
                          + " that does not need their tokens; drop the action (map the"
                          + " reference as an association, with cascade = CascadeType.REMOVE or"
                          + " orphanRemoval)")
                  .getMessage());
        }
      }
      for (ForeignKey key : table.getForeignKeyCollection()) {
        String action = action(key);
        if (action != null) {
          check(
              new Reference(
                  stored(table.getName(), table.isQuoted()),
                  names(key.getColumns()),
                  stored(key.getReferencedTable().getName(), key.getReferencedTable().isQuoted()),
                  key.isReferenceToPrimaryKey()
                      ? names(primaryKeyColumns(key.getReferencedTable()))
                      : names(key.getReferencedColumns()),
                  action,
                  false));
        }
      }
    }
  }

  /**
   * Refuses {@code reference} unless it is a row's own part's key, or every write of the referenced
   * table needs every token a write of the referencing one does.
   *
   * @throws MappingException naming the entity, table and key
   */
  void check(Reference reference) {
    Guard guard = guards.get(key(reference.table()));
    if (guard == null
        || (!reference.rule() && isOwnKey(reference))
        || covers(guards.get(key(reference.referenced())), guard)) {
      return;
    }
    if (reference.rule()) {
      throw new MappingException(
          FencedEntity.invalid(
                  guard.owner,
                  "a "
                      + reference.action()
                      + ": PostgreSQL runs it inside a write of "
                      + reference.referenced()
                      + ", which does not need the tokens of the fenced rows of "
                      + reference.table()
                      + " that it may write; drop the rule (write those rows from the application,"
                      + " fenced)"
                      + (guard.perRow
                          ? ""
                          : ", or fence the entity of "
                              + reference.referenced()
                              + " with the same resource"))
              .getMessage());
    }
    throw new MappingException(
        FencedEntity.invalid(
                guard.owner,
                "the foreign key of table "
                    + reference.table()
                    + " on "
                    + reference.columns()
                    + " to table "
                    + reference.referenced()
                    + " is "
                    + reference.action()
                    + ": PostgreSQL would write fenced rows of "
                    + reference.table()
                    + " when a row of "
                    + reference.referenced()
                    + " is deleted (or its key changed), a write that does not need their"
                    + " tokens; drop the action and use cascade = CascadeType.REMOVE or"
                    + " orphanRemoval (Hibernate deletes each row, fenced)"
                    + (guard.perRow
                        ? " (a table whose rows name their own resources takes no database"
                            + " action from another row)"
                        : ", or fence the referenced entity with the same resource"))
            .getMessage());
  }

  /**
   * A table's or column's name as stored ({@link #stored}) as compared here: as {@link
   * dev.fencing.jdbc.FencedTables} matches a declared table and a written one, its non-ASCII
   * letters in lower case, cut to the 63 bytes the server keeps; without schema, as there.
   */
  static String key(String stored) {
    return FencedTables.matchKey(stored);
  }

  /** The name the server stores for a name the mapping gives: quoted as it is, else folded. */
  private static String stored(String name, boolean quoted) {
    if (quoted) {
      return name;
    }
    StringBuilder folded = new StringBuilder(name);
    for (int i = 0; i < folded.length(); i++) {
      char c = folded.charAt(i);
      if (c >= 'A' && c <= 'Z') {
        folded.setCharAt(i, (char) (c + ('a' - 'A')));
      }
    }
    return folded.toString();
  }

  private static String key(Table table) {
    return key(stored(table.getName(), table.isQuoted()));
  }

  /**
   * The action {@code key} makes the database write its table with, as the message names it; null
   * if none. Read from {@code @OnDelete} and from the key's own SQL ({@code @ForeignKey(
   * foreignKeyDefinition = "... on delete cascade")}), which Hibernate passes on as it is.
   */
  private static @Nullable String action(ForeignKey key) {
    OnDeleteAction onDelete = key.getOnDeleteAction();
    if (onDelete != null
        && onDelete != OnDeleteAction.NO_ACTION
        && onDelete != OnDeleteAction.RESTRICT) {
      return "ON DELETE " + onDelete + " (@OnDelete)";
    }
    String written = written(key.getKeyDefinition());
    return written == null ? null : written + " (its foreignKeyDefinition)";
  }

  /** The writing referential action {@code sql} declares, upper case; null if none. */
  private static @Nullable String written(@Nullable String sql) {
    Matcher written = sql == null ? null : WRITING_ACTION.matcher(sql);
    return written != null && written.find()
        ? written.group().replaceAll("\\s+", " ").toUpperCase(Locale.ROOT)
        : null;
  }

  private void guard(Table table, FencedEntity fencing) {
    Guard guard = guards.get(key(table));
    if (guard == null) {
      guard = new Guard();
      guard.owner = fencing.entityName();
      guards.put(key(table), guard);
    }
    if (!tables.contains(table)) {
      tables.add(table);
    }
    if (fencing.attribute() == null) {
      guard.resources.add(fencing.fixedResource());
    } else {
      guard.perRow = true;
    }
  }

  private void ownKey(Table table, List<Column> columns, Map<String, List<String>> owners) {
    ownKeys
        .computeIfAbsent(key(table), t -> new ArrayList<>())
        .add(new OwnKey(keys(names(columns)), owners));
  }

  /**
   * Whether {@code reference} is a row's own part's key: its own key columns referring, pairwise,
   * to the primary key of one of the owner's tables. The same columns referring to another (unique)
   * column of that table refer to another row, of another resource if rows name their own.
   */
  private boolean isOwnKey(Reference reference) {
    Set<List<String>> pairs = pairs(keys(reference.columns()), keys(reference.referencedColumns()));
    for (OwnKey own : ownKeys.getOrDefault(key(reference.table()), List.of())) {
      List<String> ownerKey = own.owners().get(key(reference.referenced()));
      if (ownerKey != null && pairs != null && pairs.equals(pairs(own.columns(), ownerKey))) {
        return true;
      }
    }
    return false;
  }

  /** The pairs (referencing column, referenced column), by {@link #key}; null if unpaired. */
  private static @Nullable Set<List<String>> pairs(List<String> columns, List<String> referenced) {
    if (columns.isEmpty() || columns.size() != referenced.size()) {
      return null;
    }
    Set<List<String>> pairs = new HashSet<>();
    for (int i = 0; i < columns.size(); i++) {
      pairs.add(List.of(columns.get(i), referenced.get(i)));
    }
    return pairs;
  }

  private static List<String> keys(List<String> names) {
    List<String> keys = new ArrayList<>();
    for (String name : names) { // stored names
      keys.add(key(name));
    }
    return keys;
  }

  /** The stored names of {@code table}'s primary key columns, by {@link #key}; empty if none. */
  private static List<String> primaryKey(Table table) {
    return keys(names(primaryKeyColumns(table)));
  }

  private static List<Column> primaryKeyColumns(Table table) {
    return table.getPrimaryKey() == null ? List.of() : table.getPrimaryKey().getColumns();
  }

  /**
   * Whether every write of the referenced table needs every token a write of the fenced one does:
   * only for a table with fixed resources (a per-row table's row names its own).
   */
  private static boolean covers(@Nullable Guard referenced, Guard fenced) {
    return referenced != null
        && !fenced.perRow
        && !referenced.perRow
        && referenced.resources.containsAll(fenced.resources);
  }

  private static boolean ownsOrInherits(PersistentClass entity, PersistentClass owner) {
    for (PersistentClass c = entity; c != null; c = c.getSuperclass()) {
      if (c == owner) {
        return true;
      }
    }
    return false;
  }

  private static List<String> names(List<Column> columns) {
    List<String> names = new ArrayList<>();
    for (Column column : columns) {
      names.add(stored(column.getName(), column.isQuoted()));
    }
    return names;
  }
}
