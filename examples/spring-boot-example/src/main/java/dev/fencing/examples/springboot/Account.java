package dev.fencing.examples.springboot;

import dev.fencing.jpa.Fenced;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

/** An account; each one is its own fenced resource, {@code account:<number>}. */
@Entity
@Fenced(prefix = "account:", attribute = "number")
public class Account {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  private String number;
  private long balance;

  protected Account() {}

  public Account(String number) {
    this.number = number;
  }

  public String number() {
    return number;
  }

  public long balance() {
    return balance;
  }

  void deposit(long amount) {
    balance += amount;
  }
}
