package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/** Per-row resources with IDENTITY ids: Hibernate inserts inside {@code persist()}. */
@Entity
@Table(name = "identity_wallet")
@Fenced(prefix = "wallet:", attribute = "number")
public class IdentityWallet {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  @Nullable Long id;

  long number;

  long balance;

  protected IdentityWallet() {}

  IdentityWallet(long number, long balance) {
    this.number = number;
    this.balance = balance;
  }
}
