package dev.fencing.jpa;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
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
import org.jspecify.annotations.Nullable;

/**
 * Refuses, when Hibernate starts, a foreign key of a fenced entity's table (or of a collection
 * table it owns) whose {@code ON DELETE} action writes that table ({@code @OnDelete(action =
 * CASCADE)}, {@code SET_NULL}, {@code SET_DEFAULT}, or an {@code ON DELETE} / {@code ON UPDATE}
 * action written in the key's {@code foreignKeyDefinition}; one written in a column's {@code
 * columnDefinition} is refused whatever it references) when the row it references may be deleted
 * without the tokens the fenced rows need. PostgreSQL runs such an action itself, inside the {@code
 * DELETE} of the referenced row: no statement names the fenced table, so neither an entity event
 * nor the {@code FencedDataSource} sees that fenced rows are deleted or changed (an unfenced
 * parent's delete, with no token bound, deleted its fenced children).
 *
 * <p>Allowed: the key that makes a row's own parts follow it (a {@code JOINED} subclass's table, a
 * secondary table, a collection table, to the owner's table: the same row, the same resource), and
 * a key of a table with one resource per table to a table every write of which needs all of that
 * table's resources.
 */
final class DatabaseCascades {
  /** A referential action that writes the referencing rows, as a key's SQL may declare it. */
  private static final Pattern WRITING_ACTION =
      Pattern.compile(
          "\\bon\\s+(delete|update)\\s+(cascade|set\\s+null|set\\s+default)\\b",
          Pattern.CASE_INSENSITIVE);

  private DatabaseCascades() {}

  /** What a write of a table needs: fixed resources, and whether its rows name their own. */
  private static final class Guard {
    final Set<String> resources = new TreeSet<>();
    boolean perRow;
  }

  /**
   * @throws MappingException naming the entity, table and key, if a deleting action could write
   *     fenced rows without their tokens
   */
  static void check(Metadata metadata, Map<String, FencedEntity> fenced) {
    Map<Table, Guard> guards = new IdentityHashMap<>();
    Map<Table, String> owners = new IdentityHashMap<>();
    Map<Table, List<Set<Column>>> ownKeys = new IdentityHashMap<>();
    for (PersistentClass entity : metadata.getEntityBindings()) {
      FencedEntity fencing = fenced.get(entity.getEntityName());
      if (fencing == null) {
        continue;
      }
      List<Table> tables = new ArrayList<>(entity.getTableClosure());
      for (Join join : entity.getJoinClosure()) {
        tables.add(join.getTable());
        ownKey(ownKeys, join.getTable(), join.getKey().getColumns());
      }
      if (entity instanceof JoinedSubclass) {
        ownKey(ownKeys, entity.getTable(), entity.getKey().getColumns());
      }
      for (Table table : tables) {
        guard(guards, owners, table, fencing);
      }
    }
    for (Collection collection : metadata.getCollectionBindings()) {
      if (collection.isInverse() || collection.isOneToMany()) {
        continue; // its rows are another entity's, fenced (or not) by that entity
      }
      for (PersistentClass entity : metadata.getEntityBindings()) {
        FencedEntity fencing = fenced.get(entity.getEntityName());
        if (fencing != null && ownsOrInherits(entity, collection.getOwner())) {
          Table table = collection.getCollectionTable();
          guard(guards, owners, table, fencing);
          ownKey(ownKeys, table, collection.getKey().getColumns());
        }
      }
    }
    for (Map.Entry<Table, Guard> entry : guards.entrySet()) {
      Table table = entry.getKey();
      for (Column column : table.getColumns()) {
        String action = written(column.getSqlType());
        if (action != null) {
          throw new MappingException(
              FencedEntity.invalid(
                      owners.get(table),
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
        if (action == null) {
          continue;
        }
        if (isOwnKey(ownKeys, table, key) || covers(guards.get(key.getReferencedTable()), entry)) {
          continue;
        }
        throw new MappingException(
            FencedEntity.invalid(
                    owners.get(table),
                    "the foreign key of table "
                        + table.getName()
                        + " on "
                        + names(key.getColumns())
                        + " to table "
                        + key.getReferencedTable().getName()
                        + " is "
                        + action
                        + ": PostgreSQL would write fenced rows of "
                        + table.getName()
                        + " when a row of "
                        + key.getReferencedTable().getName()
                        + " is deleted (or its key changed), a write that does not need their"
                        + " tokens; drop the action and use cascade = CascadeType.REMOVE or"
                        + " orphanRemoval (Hibernate deletes each row, fenced)"
                        + (entry.getValue().perRow
                            ? " (a table whose rows name their own resources takes no database"
                                + " action from another row)"
                            : ", or fence the referenced entity with the same resource"))
                .getMessage());
      }
    }
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

  private static void guard(
      Map<Table, Guard> guards, Map<Table, String> owners, Table table, FencedEntity fencing) {
    Guard guard = guards.computeIfAbsent(table, t -> new Guard());
    owners.putIfAbsent(table, fencing.entityName());
    if (fencing.attribute() == null) {
      guard.resources.add(fencing.fixedResource());
    } else {
      guard.perRow = true;
    }
  }

  private static void ownKey(Map<Table, List<Set<Column>>> ownKeys, Table table, List<Column> key) {
    ownKeys.computeIfAbsent(table, t -> new ArrayList<>()).add(new HashSet<>(key));
  }

  private static boolean isOwnKey(
      Map<Table, List<Set<Column>>> ownKeys, Table table, ForeignKey k) {
    List<Set<Column>> keys = ownKeys.get(table);
    return keys != null && keys.contains(new HashSet<>(k.getColumns()));
  }

  /**
   * Whether every write of the referenced table needs every token a write of the fenced one does:
   * only for a table with fixed resources (a per-row table's row names its own).
   */
  private static boolean covers(Guard referenced, Map.Entry<Table, Guard> fenced) {
    Guard guard = fenced.getValue();
    return referenced != null
        && !guard.perRow
        && !referenced.perRow
        && referenced.resources.containsAll(guard.resources);
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
      names.add(column.getName());
    }
    return names;
  }
}
