package dev.fencing.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Inheritance;
import jakarta.persistence.InheritanceType;
import jakarta.persistence.Table;

/** One resource per row over two tables (JOINED): vehicle "v1" is resource {@code vehicle:v1}. */
@Entity
@Table(name = "vehicle")
@Inheritance(strategy = InheritanceType.JOINED)
@Fenced(prefix = "vehicle:", attribute = "id")
public class Vehicle {
  @Id String id = "";

  long mileage;

  protected Vehicle() {}

  Vehicle(String id) {
    this.id = id;
  }
}
