package dev.fencing.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.HashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** One resource per row, named by a column: account number 7 is resource {@code account:7}. */
@Entity
@Table(name = "account")
@Fenced(prefix = "account:", attribute = "number")
public class Account {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  @Column(unique = true)
  long number;

  long balance;

  @ElementCollection
  @CollectionTable(name = "account_holder")
  Set<String> holders = new HashSet<>();

  protected Account() {}

  Account(long number, long balance) {
    this.number = number;
    this.balance = balance;
  }
}
