package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A balance of the fixed resource {@code ledger}, found and changed by dirty checking. */
@Entity
@Table(name = "ledger_balance")
@Fenced("ledger")
public class LedgerBalance {
  @Id long id;

  long balance;

  protected LedgerBalance() {}

  LedgerBalance(long id) {
    this.id = id;
  }
}
