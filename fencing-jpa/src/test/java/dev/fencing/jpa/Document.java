package dev.fencing.jpa;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** An element collection: changing only the tags writes only the collection table. */
@Entity
@Table(name = "document")
@Fenced("docs")
public class Document {
  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE)
  @Nullable Long id;

  String title = "";

  @ElementCollection
  @CollectionTable(name = "document_tag")
  Set<String> tags = new HashSet<>();

  protected Document() {}

  Document(String title, String... tags) {
    this.title = title;
    this.tags.addAll(List.of(tags));
  }
}
