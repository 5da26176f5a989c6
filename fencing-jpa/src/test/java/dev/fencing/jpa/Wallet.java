package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** One resource per row, named by the identifier: wallet "w1" is resource {@code wallet:w1}. */
@Entity
@Table(name = "wallet")
@Fenced(prefix = "wallet:", attribute = "id")
public class Wallet {
  @Id String id = "";

  long balance;

  protected Wallet() {}

  Wallet(String id, long balance) {
    this.id = id;
    this.balance = balance;
  }
}
