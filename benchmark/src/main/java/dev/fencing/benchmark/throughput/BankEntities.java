package dev.fencing.benchmark.throughput;

import dev.fencing.jpa.Fenced;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.MappedSuperclass;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.time.LocalDateTime;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The pgbench tables as entities, three times over: plain, {@code @Fenced} (one resource per
 * branch, {@code branch:<bid>}) and {@code @Version}ed. Each set goes into its own Hibernate
 * SessionFactory; all map the same tables.
 */
final class BankEntities {
  private BankEntities() {}

  static final Class<?>[] PLAIN = {
    PlainAccount.class, PlainTeller.class, PlainBranch.class, PlainHistory.class
  };
  static final Class<?>[] FENCED = {
    FencedAccount.class, FencedTeller.class, FencedBranch.class, FencedHistory.class
  };
  static final Class<?>[] VERSIONED = {
    VersionedAccount.class, VersionedTeller.class, VersionedBranch.class, PlainHistory.class
  };

  /** The entity classes of one set as the TPC-B-like transaction uses them. */
  record Rows(
      Class<? extends AccountRow> account,
      Class<? extends TellerRow> teller,
      Class<? extends BranchRow> branch,
      Supplier<? extends HistoryRow> history) {}

  static final Rows PLAIN_ROWS =
      new Rows(PlainAccount.class, PlainTeller.class, PlainBranch.class, PlainHistory::new);
  static final Rows FENCED_ROWS =
      new Rows(FencedAccount.class, FencedTeller.class, FencedBranch.class, FencedHistory::new);
  static final Rows VERSIONED_ROWS =
      new Rows(
          VersionedAccount.class, VersionedTeller.class, VersionedBranch.class, PlainHistory::new);

  @MappedSuperclass
  abstract static class AccountRow {
    @Id int aid;
    int bid;
    int abalance;
    @Nullable String filler;
  }

  @MappedSuperclass
  abstract static class TellerRow {
    @Id int tid;
    int bid;
    int tbalance;
    @Nullable String filler;
  }

  @MappedSuperclass
  abstract static class BranchRow {
    @Id int bid;
    int bbalance;
    @Nullable String filler;
  }

  @MappedSuperclass
  abstract static class HistoryRow {
    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    @Nullable Long hid;

    int tid;
    int bid;
    int aid;
    int delta;
    @Nullable LocalDateTime mtime;
    @Nullable String filler;

    HistoryRow fill(int tid, int bid, int aid, int delta) {
      this.tid = tid;
      this.bid = bid;
      this.aid = aid;
      this.delta = delta;
      this.mtime = LocalDateTime.now();
      return this;
    }
  }

  @Entity
  @Table(name = "pgbench_accounts")
  static class PlainAccount extends AccountRow {}

  @Entity
  @Table(name = "pgbench_tellers")
  static class PlainTeller extends TellerRow {}

  @Entity
  @Table(name = "pgbench_branches")
  static class PlainBranch extends BranchRow {}

  @Entity
  @Table(name = "pgbench_history")
  static class PlainHistory extends HistoryRow {}

  @Entity
  @Table(name = "pgbench_accounts")
  @Fenced(prefix = "branch:", attribute = "bid")
  static class FencedAccount extends AccountRow {}

  @Entity
  @Table(name = "pgbench_tellers")
  @Fenced(prefix = "branch:", attribute = "bid")
  static class FencedTeller extends TellerRow {}

  @Entity
  @Table(name = "pgbench_branches")
  @Fenced(prefix = "branch:", attribute = "bid")
  static class FencedBranch extends BranchRow {}

  @Entity
  @Table(name = "pgbench_history")
  @Fenced(prefix = "branch:", attribute = "bid")
  static class FencedHistory extends HistoryRow {}

  @Entity
  @Table(name = "pgbench_accounts")
  static class VersionedAccount extends AccountRow {
    @Version long version;
  }

  @Entity
  @Table(name = "pgbench_tellers")
  static class VersionedTeller extends TellerRow {
    @Version long version;
  }

  @Entity
  @Table(name = "pgbench_branches")
  static class VersionedBranch extends BranchRow {
    @Version long version;
  }
}
