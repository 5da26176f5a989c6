package dev.fencing.jpa;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.hibernate.SessionFactory;
import org.hibernate.SessionFactoryObserver;
import org.hibernate.engine.jdbc.connections.spi.JdbcConnectionAccess;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.jspecify.annotations.Nullable;

/**
 * Reads, once the {@code SessionFactory} is built, the foreign keys the database has on the tables
 * the mapping fences whose {@code ON DELETE} or {@code ON UPDATE} action writes them ({@code
 * pg_catalog.pg_constraint}'s {@code confdeltype} / {@code confupdtype}), and applies {@link
 * DatabaseCascades#check} to each: the keys the application's own migrations (Flyway, Liquibase, a
 * script) declared, which the mapping knows nothing of, as well as those Hibernate created.
 *
 * <p>A rule run by a write of a table ({@code CREATE RULE ... ON DELETE TO barn DO ALSO DELETE FROM
 * foal ...}) is a cascade declared by other means: each table its actions write is checked as if it
 * had a key to the rule's table. The tables are those its actions name ({@code pg_depend}) and
 * those a view it names reads (a write of an automatically updatable view writes them), kept when
 * the rule's query trees say its actions write the one named ({@link RuleActions}); when the trees
 * cannot be read exactly, every one named counts as written. A write of a table writes its
 * partitions and inheritance children too. A view's {@code SELECT} rule is not read, nor what a
 * function an action calls writes.
 *
 * <p>It runs as a {@code SessionFactoryObserver} registered by {@link FencingIntegrator}, after
 * Hibernate's schema management ({@code hibernate.hbm2ddl.auto}, {@code
 * jakarta.persistence.schema-generation.database.action}), whose observer Hibernate registers
 * before any integrator runs: with {@code create}, it reads the schema just created, not the one
 * dropped. A refusal fails the {@code SessionFactory}'s construction (Hibernate closes it). A key
 * added after start (a migration run later) is seen at the next start only.
 *
 * <p>Tables are matched by name in every schema (other sessions' temporary tables aside), as {@link
 * dev.fencing.jdbc.FencedTables} matches a written table to a declared one: a write of any table of
 * a fenced table's name needs its tokens, so a key of any of them is checked (a refusal names the
 * schema). A key's rows are also those of its table's ancestors (a partition's, an {@code INHERITS}
 * child's: read, updated and deleted through the parent) and, for a partitioned table, those of its
 * partitions: a key declared on a partition or a child of a fenced table, or on the partitioned
 * table of a fenced partition, is checked as the fenced table's. The match is made here, by those
 * rules, not by the server's (whose folding of non-ASCII letters depends on the encoding and
 * collation): every key with a writing action is read. Every name in the query is qualified by
 * {@code pg_catalog}: no object of the application's schemas, nor the session's {@code
 * search_path}, answers for one.
 */
final class CascadeCatalog implements SessionFactoryObserver {
  private static final String KEYS =
      "SELECT s.name, n.nspname, c.relname, s.cols, r.relname, s.del, s.upd,"
          // the tables whose rows are the written table's: its ancestors (partitioning, INHERITS)
          + " ARRAY(WITH RECURSIVE up(oid) AS (SELECT s.relid UNION"
          + " SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up"
          + " ON i.inhrelid OPERATOR(pg_catalog.=) up.oid)"
          + " SELECT t.relname::pg_catalog.text FROM up JOIN pg_catalog.pg_class t"
          + " ON t.oid OPERATOR(pg_catalog.=) up.oid"
          + " WHERE up.oid OPERATOR(pg_catalog.<>) s.relid ORDER BY t.relname),"
          // a key's copies: the partitions below a partitioned table, whose rows are its own; a
          // rule's write of a table writes its inheritance children too (no key is inherited)
          + " ARRAY(WITH RECURSIVE down(oid) AS (SELECT s.relid UNION"
          + " SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down"
          + " ON i.inhparent OPERATOR(pg_catalog.=) down.oid)"
          + " SELECT t.relname::pg_catalog.text FROM down JOIN pg_catalog.pg_class t"
          + " ON t.oid OPERATOR(pg_catalog.=) down.oid"
          + " WHERE down.oid OPERATOR(pg_catalog.<>) s.relid"
          + " AND (s.kind OPERATOR(pg_catalog.=) 'r' OR c.relkind OPERATOR(pg_catalog.=) 'p')"
          + " ORDER BY t.relname),"
          + " s.kind, s.rule, s.via, s.vianame, s.actions, s.refcols"
          + " FROM (SELECT k.conname AS name, k.conrelid AS relid, k.confrelid AS referenced,"
          + " k.confdeltype AS del, k.confupdtype AS upd, 'k'::pg_catalog.\"char\" AS kind,"
          + " ARRAY(SELECT a.attname::pg_catalog.text"
          + " FROM pg_catalog.unnest(k.conkey) WITH ORDINALITY AS u(attnum, i)"
          + " JOIN pg_catalog.pg_attribute a"
          + " ON a.attrelid OPERATOR(pg_catalog.=) k.conrelid"
          + " AND a.attnum OPERATOR(pg_catalog.=) u.attnum ORDER BY u.i) AS cols,"
          // the referenced columns, paired with those by position
          + " ARRAY(SELECT a.attname::pg_catalog.text"
          + " FROM pg_catalog.unnest(k.confkey) WITH ORDINALITY AS u(attnum, i)"
          + " JOIN pg_catalog.pg_attribute a"
          + " ON a.attrelid OPERATOR(pg_catalog.=) k.confrelid"
          + " AND a.attnum OPERATOR(pg_catalog.=) u.attnum ORDER BY u.i) AS refcols,"
          + " NULL::pg_catalog.oid AS rule, NULL::pg_catalog.oid AS via,"
          + " NULL::pg_catalog.text AS vianame, NULL::pg_catalog.text AS actions"
          + " FROM pg_catalog.pg_constraint k"
          + " WHERE k.contype OPERATOR(pg_catalog.=) 'f'"
          // a partition's copy of a partitioned table's key: its parent's is read (with the
          // names of the partitions it covers)
          + " AND k.conparentid OPERATOR(pg_catalog.=) 0"
          + " AND (k.confdeltype OPERATOR(pg_catalog.=) ANY ('{c,n,d}'::pg_catalog.\"char\"[])"
          + " OR k.confupdtype OPERATOR(pg_catalog.=) ANY ('{c,n,d}'::pg_catalog.\"char\"[]))"
          // a rule run by a write (not a view's SELECT): each table its actions name (via), and
          // those a view it names reads (a write of an updatable view writes them), with its
          // query trees, which say which of them it writes (RuleActions)
          + " UNION SELECT w.rulename, x.relid, w.ev_class, w.ev_type, NULL, 'r',"
          + " '{}'::pg_catalog.text[], '{}'::pg_catalog.text[], w.oid, x.via,"
          + " (SELECT vn.nspname OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) v.relname"
          + " FROM pg_catalog.pg_class v JOIN pg_catalog.pg_namespace vn"
          + " ON vn.oid OPERATOR(pg_catalog.=) v.relnamespace"
          + " WHERE v.oid OPERATOR(pg_catalog.=) x.via),"
          + " w.ev_action::pg_catalog.text"
          + " FROM pg_catalog.pg_rewrite w, LATERAL (WITH RECURSIVE named(relid, via) AS ("
          + " SELECT d.refobjid, d.refobjid FROM pg_catalog.pg_depend d"
          + " WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
          + " AND d.objid OPERATOR(pg_catalog.=) w.oid"
          + " AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
          + " AND d.deptype OPERATOR(pg_catalog.=) 'n'"
          + " UNION SELECT e.refobjid, named.via FROM named JOIN pg_catalog.pg_rewrite u"
          + " ON u.ev_class OPERATOR(pg_catalog.=) named.relid"
          + " AND u.ev_type OPERATOR(pg_catalog.=) '1'"
          + " JOIN pg_catalog.pg_depend e"
          + " ON e.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
          + " AND e.objid OPERATOR(pg_catalog.=) u.oid"
          + " AND e.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
          + " AND e.deptype OPERATOR(pg_catalog.=) 'n')"
          + " SELECT named.relid, named.via FROM named) x"
          + " WHERE w.ev_type OPERATOR(pg_catalog.<>) '1') s"
          + " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.relid"
          + " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace"
          + " JOIN pg_catalog.pg_class r ON r.oid OPERATOR(pg_catalog.=) s.referenced"
          + " WHERE NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)"
          + " ORDER BY s.kind, n.nspname, c.relname, s.name";

  private final transient DatabaseCascades cascades;

  CascadeCatalog(DatabaseCascades cascades) {
    this.cascades = cascades;
  }

  @Override
  public void sessionFactoryCreated(SessionFactory factory) {
    if (cascades.tableKeys().isEmpty()) {
      return;
    }
    JdbcConnectionAccess access =
        ((SessionFactoryImplementor) factory).getJdbcServices().getBootstrapJdbcConnectionAccess();
    List<DatabaseCascades.Reference> references;
    try {
      Connection connection = access.obtainConnection();
      try {
        references = read(connection);
      } finally {
        access.releaseConnection(connection);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "fencing-jpa could not read the foreign keys of the tables of @Fenced entities from"
              + " pg_catalog (it must, to refuse a database cascade that would write fenced rows"
              + " without their tokens)",
          e);
    }
    references.forEach(cascades::check);
  }

  /** The writing actions of the keys of the fenced tables, one per action. */
  private List<DatabaseCascades.Reference> read(Connection connection) throws SQLException {
    List<DatabaseCascades.Reference> references = new ArrayList<>();
    boolean autoCommit = connection.getAutoCommit();
    try (PreparedStatement statement = connection.prepareStatement(KEYS)) {
      Set<String> fenced = cascades.tableKeys();
      // by rule: the relations its actions write (RuleActions), empty if it cannot tell
      Map<Long, Optional<Set<Long>>> writes = new HashMap<>();
      try (ResultSet rows = statement.executeQuery()) {
        while (rows.next()) {
          boolean rule = "r".equals(rows.getString(10));
          if (rule) {
            String actions = rows.getString(14);
            Optional<Set<Long>> written =
                writes.computeIfAbsent(
                    rows.getLong(11), r -> Optional.ofNullable(RuleActions.written(actions)));
            if (written.isPresent() && !written.get().contains(rows.getLong(12))) {
              continue; // a relation the rule only reads (or a view it only reads reads)
            }
          }
          String schema = rows.getString(2);
          String table = rows.getString(3);
          // the fenced tables whose rows this key writes: its own table, or one whose rows
          // include its table's (an ancestor), or whose rows its table's include (a partition)
          List<String[]> written = new ArrayList<>();
          written.add(new String[] {table, ""});
          for (String ancestor : (String[]) rows.getArray(8).getArray()) {
            written.add(
                new String[] {
                  ancestor,
                  "; "
                      + schema
                      + "."
                      + table
                      + " is a partition or inheritance child of "
                      + ancestor
                });
          }
          for (String partition : (String[]) rows.getArray(9).getArray()) {
            written.add(
                new String[] {
                  partition,
                  "; "
                      + partition
                      + (rule ? " is a partition or inheritance child of " : " is a partition of ")
                      + schema
                      + "."
                      + table
                });
          }
          for (String[] target : written) {
            if (fenced.contains(DatabaseCascades.key(target[0]))) {
              add(references, rows, target[0], target[1]);
            }
          }
        }
      }
    } finally {
      if (!autoCommit) {
        connection.rollback(); // a read: end the transaction it began
      }
    }
    return references;
  }

  /** The writing actions of the key at {@code rows}' row, as a key of fenced {@code table}. */
  private static void add(
      List<DatabaseCascades.Reference> references, ResultSet rows, String table, String relation)
      throws SQLException {
    if ("r".equals(rows.getString(10))) {
      String event =
          switch (rows.getString(6)) {
            case "2" -> "UPDATE";
            case "3" -> "INSERT";
            default -> "DELETE";
          };
      references.add(
          new DatabaseCascades.Reference(
              table,
              List.of(),
              rows.getString(5),
              List.of(),
              "rule "
                  + rows.getString(1)
                  + " ON "
                  + event
                  + " TO "
                  + rows.getString(5)
                  + ", in the database, whose actions "
                  + (rows.getString(13).equals(rows.getString(2) + "." + rows.getString(3))
                      ? "name "
                      : "write " + rows.getString(13) + ", a view of ")
                  + rows.getString(2)
                  + "."
                  + rows.getString(3)
                  + relation.replace("; ", ", and "),
              true));
      return;
    }
    String where =
        " (constraint "
            + rows.getString(1)
            + " of "
            + rows.getString(2)
            + "."
            + rows.getString(3)
            + ", in the database"
            + relation
            + ")";
    List<String> columns = List.of((String[]) rows.getArray(4).getArray());
    for (String[] action :
        new String[][] {{"ON DELETE ", rows.getString(6)}, {"ON UPDATE ", rows.getString(7)}}) {
      String written = written(action[1]);
      if (written != null) {
        references.add(
            new DatabaseCascades.Reference(
                table,
                columns,
                rows.getString(5),
                List.of((String[]) rows.getArray(15).getArray()),
                action[0] + written + where,
                false));
      }
    }
  }

  /** The action a {@code confdeltype} / {@code confupdtype} code names, if it writes; else null. */
  private static @Nullable String written(String code) {
    return switch (code) {
      case "c" -> "CASCADE";
      case "n" -> "SET NULL";
      case "d" -> "SET DEFAULT";
      default -> null;
    };
  }

  @Override
  public String toString() {
    return "fencing-jpa's check of the database's cascades into fenced tables";
  }
}
